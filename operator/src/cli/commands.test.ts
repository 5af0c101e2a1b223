import { describe, expect, it } from "vitest";
import {
  decisionBlocker,
  decisionPatch,
  formatApplianceStatus,
  type ProposalView,
  parseArguments,
  splitConnectionFlags,
  UsageError,
} from "./commands.js";

const digest = `sha256:${"c".repeat(64)}`;
const at = "2026-01-01T00:00:00Z";
const pending: ProposalView = {
  metadata: { name: "box-p-1", generation: 1 },
  spec: {
    applianceRef: { name: "box" },
    proposalId: "p-1",
    artifactPath: "notes/a.md",
    proposedDigest: digest,
    diff: "+a",
    rationale: "r",
    proposedBy: "system:serviceaccount:remram-system:remram-operator",
  },
  status: {
    phase: "Pending",
    conditions: [
      { type: "Ready", status: "False", reason: "AwaitingApproval", message: "", lastTransitionTime: at },
    ],
  },
};

describe("kubectl remram arguments", () => {
  it("parse approve with namespace and comment in either flag style", () => {
    expect(parseArguments(["approve", "box-p-1", "-n", "home", "--comment", "looks right"])).toEqual({
      verb: "approve",
      name: "box-p-1",
      namespace: "home",
      comment: "looks right",
    });
    expect(parseArguments(["deny", "x", "--namespace=home", "--comment=no"])).toMatchObject({
      namespace: "home",
      comment: "no",
    });
    expect(parseArguments(["dream", "now", "nightly"])).toEqual({ verb: "dream-now", name: "nightly" });
  });

  it("take kubectl's connection flags, which kubectl passes on to plugins, out of the command", () => {
    expect(
      splitConnectionFlags(["approve", "p1", "--kubeconfig=/k/alice", "-n", "home", "--context", "box"]),
    ).toEqual({
      connection: { kubeconfig: "/k/alice", context: "box" },
      rest: ["approve", "p1", "-n", "home"],
    });
    expect(splitConnectionFlags(["status"])).toEqual({ connection: {}, rest: ["status"] });
    expect(() => splitConnectionFlags(["status", "--kubeconfig"])).toThrow(UsageError);
    expect(() => splitConnectionFlags(["status", "--context="])).toThrow("--context needs a value");
  });

  it("explain what is missing or unknown", () => {
    expect(() => parseArguments(["approve"])).toThrow(
      new UsageError("approve needs the ArtifactProposal name"),
    );
    expect(() => parseArguments(["promote", "x"])).toThrow(/unknown command promote/);
    expect(() => parseArguments(["approve", "x", "--force"])).toThrow(/unknown flag --force/);
    expect(() => parseArguments(["approve", "x", "-n"])).toThrow(/-n needs a value/);
  });
});

describe("deciding a proposal", () => {
  it("records the decision, the requester, the generation and the digest, guarded by a test op", () => {
    const patch = decisionPatch(pending, "Approved", "alice", at, "ship it");
    expect(patch[0]).toEqual({ op: "test", path: "/status/conditions", value: pending.status?.conditions });
    expect(patch[1]).toMatchObject({
      op: "add",
      path: "/status/conditions/-",
      value: { type: "Approved", status: "True" },
    });
    expect(patch[2]).toEqual({
      op: "add",
      path: "/status/approval",
      value: {
        decision: "Approved",
        by: "alice",
        at,
        generation: 1,
        proposedDigest: digest,
        comment: "ship it",
      },
    });
  });

  it("is refused up front when already decided, not yet picked up, or self-proposed", () => {
    expect(decisionBlocker(pending, "alice")).toBeUndefined();
    const decided = {
      ...pending,
      status: {
        ...pending.status,
        approval: { decision: "Denied" as const, by: "bob", at, generation: 1, proposedDigest: digest },
      },
    };
    expect(decisionBlocker(decided, "alice")).toBe(`box-p-1 was already denied by bob at ${at}`);
    expect(decisionBlocker({ ...pending, status: undefined }, "alice")).toMatch(
      /operator has not picked it up/,
    );
    expect(decisionBlocker(pending, pending.spec.proposedBy)).toMatch(/someone else must decide/);
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
});
