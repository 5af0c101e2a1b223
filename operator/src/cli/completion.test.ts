import { describe, expect, it } from "vitest";
import { completionRequest, completionScripts, formatCompletions } from "./completion.js";

const source = (...words: string[]) => completionRequest(words).source;

describe("what kubectl remram completes", () => {
  it("offers the verbs first, with their summaries", () => {
    const request = completionRequest(["ap"]);
    expect(request.source.kind).toBe("words");
    expect(formatCompletions(request, request.source.kind === "words" ? request.source.candidates : [])).toBe(
      "approve\tapprove a Pending ArtifactProposal; the operator then promotes it\n:4\n",
    );
  });

  it("offers Pending proposals to approve and deny, any proposal to diff, appliances and schedules", () => {
    expect(source("approve", "")).toEqual({
      kind: "names",
      resource: "artifactproposals",
      pendingOnly: true,
    });
    expect(source("deny", "box")).toEqual({
      kind: "names",
      resource: "artifactproposals",
      pendingOnly: true,
    });
    expect(source("diff", "")).toEqual({ kind: "names", resource: "artifactproposals", pendingOnly: false });
    expect(source("status", "")).toEqual({ kind: "names", resource: "remramappliances", pendingOnly: false });
    expect(source("dream", "")).toMatchObject({ kind: "words", candidates: [{ value: "now" }] });
    expect(source("dream", "now", "")).toEqual({
      kind: "names",
      resource: "dreamschedules",
      pendingOnly: false,
    });
    expect(source("completion", "")).toMatchObject({ candidates: [{ value: "bash" }, { value: "zsh" }] });
    expect(source("approve", "box-p-1", "")).toEqual({ kind: "nothing" });
  });

  it("completes flag values: namespaces, contexts, files, and nothing for a comment", () => {
    expect(source("approve", "-n", "")).toEqual({ kind: "namespaces" });
    expect(source("status", "--context", "")).toEqual({ kind: "contexts" });
    expect(source("--kubeconfig", "")).toEqual({ kind: "files" });
    expect(source("approve", "x", "--comment", "")).toEqual({ kind: "nothing" });
    const inline = completionRequest(["status", "--namespace=ho"]);
    expect(inline).toMatchObject({ source: { kind: "namespaces" }, partial: "ho", prefix: "--namespace=" });
    expect(formatCompletions(inline, [{ value: "home" }, { value: "work" }])).toBe("--namespace=home\n:4\n");
  });

  it("completes user: its actions, household members to add or remove, its flags and -o's formats", () => {
    expect(source("user", "")).toMatchObject({
      kind: "words",
      candidates: [{ value: "add" }, { value: "list" }, { value: "remove" }],
    });
    expect(source("user", "add", "")).toEqual({ kind: "members" });
    expect(source("user", "remove", "al")).toEqual({ kind: "members" });
    expect(source("user", "list", "")).toEqual({ kind: "nothing" });
    expect(source("user", "add", "alice", "-o", "")).toEqual({
      kind: "words",
      candidates: [{ value: "token" }, { value: "kubeconfig" }],
    });
    expect(source("user", "add", "alice", "--duration", "")).toEqual({ kind: "nothing" });
    const flags = source("user", "add", "alice", "--");
    expect(flags.kind === "words" ? flags.candidates.map((candidate) => candidate.value) : []).toEqual(
      expect.arrayContaining(["--appliance", "--approver", "--admin", "--duration", "--output"]),
    );
  });

  it("completes export's flags: appliances for --appliance, the formats for -o", () => {
    expect(source("export", "alice", "--appliance", "")).toEqual({
      kind: "names",
      resource: "remramappliances",
      pendingOnly: false,
    });
    expect(source("export", "alice", "-o", "")).toEqual({
      kind: "words",
      candidates: [{ value: "markdown" }, { value: "json" }],
    });
    expect(source("check", "-o", "")).toEqual({
      kind: "words",
      candidates: [{ value: "text" }, { value: "json" }],
    });
    expect(source("check", "--appliance", "")).toMatchObject({ kind: "names", resource: "remramappliances" });
    // The user id is the person's, which the cluster cannot list; a value flag before it is not a position.
    expect(source("export", "--appliance", "box", "")).toEqual({ kind: "nothing" });
  });

  it("asks the cluster the flags typed so far name, and skips them when counting positions", () => {
    const request = completionRequest(["--kubeconfig", "/k/c", "approve", "-n", "home", "--context=box", ""]);
    expect(request.connection).toEqual({ kubeconfig: "/k/c", namespace: "home", context: "box" });
    expect(request.source).toEqual({ kind: "names", resource: "artifactproposals", pendingOnly: true });
  });

  it("offers the verb's flags after a dash", () => {
    const request = completionRequest(["approve", "--c"]);
    const values = request.source.kind === "words" ? request.source.candidates.map((c) => c.value) : [];
    expect(values).toContain("--comment");
    expect(formatCompletions(request, request.source.kind === "words" ? request.source.candidates : [])).toBe(
      "--context\tthe kubeconfig context\n--comment\twhy\n:4\n",
    );
    expect(source("status", "--")).not.toMatchObject({
      candidates: [expect.objectContaining({ value: "--comment" })],
    });
  });

  it("lets the shell complete file names for --kubeconfig only", () => {
    expect(formatCompletions(completionRequest(["--kubeconfig", "/tm"]), [])).toBe(":0\n");
    expect(formatCompletions(completionRequest(["approve", ""]), [])).toBe(":4\n");
  });
});

describe("the completion scripts", () => {
  it("ask kubectl-remram __complete and register for kubectl-remram", () => {
    expect(completionScripts.bash).toContain(`__complete "\${COMP_WORDS[@]:1:COMP_CWORD-1}" "$cur"`);
    expect(completionScripts.bash.trimEnd().split("\n").at(-1)).toBe(
      "complete -F _kubectl_remram kubectl-remram",
    );
    expect(completionScripts.zsh.split("\n")[0]).toBe("#compdef kubectl-remram");
    expect(completionScripts.zsh).toContain("compdef _kubectl_remram kubectl-remram");
  });
});
