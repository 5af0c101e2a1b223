import { describe, expect, it } from "vitest";
import { parseInvocation, UsageError } from "./commands.js";
import { type DreamScheduleView, formatApplianceStatus } from "./status.js";

const at = "2026-01-01T00:00:00Z";

describe("kubectl remram arguments", () => {
  it("parse approve with namespace and comment in either flag style", () => {
    expect(parseInvocation(["approve", "box-p-1", "-n", "home", "--comment", "looks right"])).toEqual({
      command: { verb: "approve", name: "box-p-1", comment: "looks right" },
      connection: { namespace: "home" },
    });
    expect(parseInvocation(["deny", "x", "--namespace=home", "--reason=no"])).toEqual({
      command: { verb: "deny", name: "x", comment: "no" },
      connection: { namespace: "home" },
    });
    expect(parseInvocation(["dream", "now", "nightly"]).command).toEqual({
      verb: "dream-now",
      name: "nightly",
    });
    expect(parseInvocation(["status"]).command).toEqual({ verb: "status" });
    expect(parseInvocation(["version", "--client"]).command).toEqual({ verb: "version", clientOnly: true });
    expect(parseInvocation(["completion", "zsh"]).command).toEqual({ verb: "completion", shell: "zsh" });
  });

  it("parse export with its appliance and output, Markdown by default", () => {
    expect(parseInvocation(["export", "telegram:42", "-n", "home"])).toEqual({
      command: { verb: "export", userId: "telegram:42", output: "markdown" },
      connection: { namespace: "home" },
    });
    expect(parseInvocation(["export", "alice", "--appliance=box", "-o", "json"]).command).toEqual({
      verb: "export",
      userId: "alice",
      appliance: "box",
      output: "json",
    });
    expect(() => parseInvocation(["export"])).toThrow("export needs the user id");
    expect(() => parseInvocation(["export", "alice", "-o", "yaml"])).toThrow(
      '-o takes markdown or json, not "yaml"',
    );
    expect(() => parseInvocation(["status", "-o", "json"])).toThrow("--output does not apply to status");
  });

  it("parse check with its appliance and output, text by default", () => {
    expect(parseInvocation(["check", "-n", "home"])).toEqual({
      command: { verb: "check", output: "text" },
      connection: { namespace: "home" },
    });
    expect(parseInvocation(["check", "--appliance", "box", "-o", "json"]).command).toEqual({
      verb: "check",
      appliance: "box",
      output: "json",
    });
    expect(() => parseInvocation(["check", "box"])).toThrow("check takes no arguments; got box");
    expect(() => parseInvocation(["check", "-o", "markdown"])).toThrow(
      '-o takes text or json, not "markdown"',
    );
    expect(() => parseInvocation(["check", "--comment", "x"])).toThrow("--comment does not apply to check");
  });

  it("parse backup (now, or list) and restore with their appliance", () => {
    expect(parseInvocation(["backup"]).command).toEqual({ verb: "backup", list: false, output: "text" });
    expect(parseInvocation(["backup", "list", "--appliance", "box", "-o", "json"]).command).toEqual({
      verb: "backup",
      list: true,
      appliance: "box",
      output: "json",
    });
    expect(() => parseInvocation(["backup", "now"])).toThrow(
      'backup takes nothing (back up now) or "list"; got now',
    );
    expect(parseInvocation(["restore", "backup-20261128T033000Z-abcdef"]).command).toEqual({
      verb: "restore",
      backupId: "backup-20261128T033000Z-abcdef",
    });
    expect(() => parseInvocation(["restore"])).toThrow("restore needs the backup id");
    expect(() => parseInvocation(["restore", "b", "-o", "json"])).toThrow(
      "--output does not apply to restore",
    );
  });

  it("parse migrations (shown, or confirmed) with their appliance and output", () => {
    expect(parseInvocation(["migrations"]).command).toEqual({
      verb: "migrations",
      confirm: false,
      output: "text",
    });
    expect(parseInvocation(["migrations", "confirm", "--appliance", "box", "-o", "json"]).command).toEqual({
      verb: "migrations",
      confirm: true,
      output: "json",
      appliance: "box",
    });
    expect(() => parseInvocation(["migrations", "delete"])).toThrow(
      'migrations takes nothing (show them) or "confirm"; got delete',
    );
  });

  it("take kubectl's connection flags, which kubectl passes on to plugins, wherever they stand", () => {
    expect(
      parseInvocation(["approve", "p1", "--kubeconfig=/k/alice", "-n", "home", "--context", "box"]),
    ).toEqual({
      command: { verb: "approve", name: "p1" },
      connection: { kubeconfig: "/k/alice", context: "box", namespace: "home" },
    });
    expect(parseInvocation(["--context", "box", "status"]).connection).toEqual({ context: "box" });
    expect(() => parseInvocation(["status", "--kubeconfig"])).toThrow(
      new UsageError("--kubeconfig needs a value"),
    );
    expect(() => parseInvocation(["status", "--context="])).toThrow("--context needs a value");
  });

  it("answer -h, --help and help VERB with help, and nothing with the general usage", () => {
    expect(parseInvocation([]).command).toEqual({ verb: "help" });
    expect(parseInvocation(["-h"]).command).toEqual({ verb: "help" });
    expect(parseInvocation(["approve", "--help"]).command).toEqual({ verb: "help", topic: "approve" });
    expect(parseInvocation(["help", "dream"]).command).toEqual({ verb: "help", topic: "dream" });
    expect(() => parseInvocation(["help", "promote"])).toThrow(/no help for "promote"/);
  });

  it("pass completion's words through untouched, unfinished flags included", () => {
    expect(parseInvocation(["__complete", "approve", "-n", ""]).command).toEqual({
      verb: "complete",
      words: ["approve", "-n", ""],
    });
  });

  it("explain what is missing, unknown or misplaced, naming the verb whose usage to show", () => {
    expect(() => parseInvocation(["approve"])).toThrow(
      new UsageError("approve needs the ArtifactProposal name", "approve"),
    );
    expect(() => parseInvocation(["approve"])).toThrow(expect.objectContaining({ topic: "approve" }));
    expect(() => parseInvocation(["approve", "a", "b"])).toThrow(
      /approve takes one ArtifactProposal name; got a b/,
    );
    expect(() => parseInvocation(["promote", "x"])).toThrow(
      /unknown command "promote"; the commands are approve/,
    );
    expect(() => parseInvocation(["approve", "x", "--force"])).toThrow(/^unknown flag --force$/);
    expect(() => parseInvocation(["approve", "x", "-n"])).toThrow(/^-n, --namespace needs a value$/);
    expect(() => parseInvocation(["status", "--comment", "x"])).toThrow(/--comment does not apply to status/);
    expect(() => parseInvocation(["approve", "x", "--comment", "a", "--reason", "b"])).toThrow(/not both/);
    expect(() => parseInvocation(["approve", "x", "--comment", "y".repeat(1025)])).toThrow(/1024/);
    expect(() => parseInvocation(["dream", "nightly"])).toThrow(/dream now SCHEDULE/);
    expect(() => parseInvocation(["completion", "fish"])).toThrow(/no completion for "fish"/);
    expect(() => parseInvocation(["version", "extra"])).toThrow(/version takes no arguments/);
  });
});

describe("the status summary", () => {
  it("leads with Ready and lists each component condition", () => {
    const text = formatApplianceStatus({
      metadata: { name: "box", generation: 2 },
      status: {
        observedGeneration: 1,
        hardwareProfile: "cpu-only",
        conditions: [
          { type: "Ready", status: "False", reason: "NotAvailable", message: "x", lastTransitionTime: at },
          {
            type: "GPUAvailable",
            status: "False",
            reason: "NoGPUCPUFallback",
            message: "cpu",
            lastTransitionTime: at,
          },
        ],
      },
    });
    expect(text.split("\n")[0]).toBe("box: Ready=False (NotAvailable), profile cpu-only");
    expect(text).toContain("status is for generation 1; spec is at 2");
    expect(text).toContain("GPUAvailable  False    NoGPUCPUFallback: cpu");
  });

  it("shows long work moving: a model's pull and the appliance's dream cycles, not other appliances'", () => {
    const schedule = (
      name: string,
      appliance: string,
      lastRun?: NonNullable<DreamScheduleView["status"]>["lastRun"],
    ): DreamScheduleView => ({
      metadata: { name },
      spec: { applianceRef: { name: appliance }, schedule: "0 3 * * *" },
      status: { nextScheduleTime: "2026-11-28T02:00:00Z", ...(lastRun === undefined ? {} : { lastRun }) },
    });
    const text = formatApplianceStatus(
      {
        metadata: { name: "box" },
        status: {
          models: [
            { name: "qwen3:8b", role: "routing" },
            {
              name: "qwen3:14b",
              role: "reflection",
              pull: {
                status: "downloading",
                completedBytes: 3 * 2 ** 30,
                totalBytes: 9 * 2 ** 30,
                percent: 33,
              },
            },
          ],
        },
      },
      [
        schedule("nightly", "box", {
          startedAt: "2026-11-27T02:00:00Z",
          finishedAt: "2026-11-27T02:00:09Z",
          outcome: "Succeeded",
          counts: { objectsScanned: 900, duplicatesMerged: 3, decayed: 0, proposalsGenerated: 1 },
          mirroredProposals: 1,
        }),
        schedule("weekly", "box", { startedAt: "2026-11-27T10:00:00Z", outcome: "Running" }),
        schedule("other", "cabin"),
      ],
    );
    expect(text).toContain("model qwen3:14b (reflection): 33% downloading (3072 MiB of 9216 MiB)");
    expect(text).not.toContain("qwen3:8b");
    expect(text).toContain(
      "dream nightly: last cycle Succeeded at 2026-11-27T02:00:09Z (duplicatesMerged 3, proposalsGenerated 1), 1 proposals to review, next 2026-11-28T02:00:00Z",
    );
    expect(text).toContain("dream weekly: a cycle is running since 2026-11-27T10:00:00Z");
    expect(text).not.toContain("other");
  });
});
