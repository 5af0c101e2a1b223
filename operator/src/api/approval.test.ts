import { describe, expect, it } from "vitest";
import { decisionBlocker, decisionPatch, type ProposalView } from "./approval.js";

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
    expect(decisionBlocker(decided, "alice")).toBe(
      `box-p-1 was already denied by bob at ${at} (phase Pending); a decision is final`,
    );
    const failed = {
      ...pending,
      status: {
        phase: "Failed" as const,
        conditions: [
          {
            type: "Ready",
            status: "False" as const,
            reason: "ApprovalStale",
            message: "spec changed",
            lastTransitionTime: at,
          },
        ],
      },
    };
    expect(decisionBlocker(failed, "alice")).toBe(
      "box-p-1 is Failed, not Pending (ApprovalStale: spec changed); only a Pending proposal can be approved or denied",
    );
    expect(decisionBlocker({ ...pending, status: undefined }, "alice")).toMatch(
      /operator has not picked it up/,
    );
    expect(decisionBlocker(pending, pending.spec.proposedBy)).toMatch(/someone else must decide/);
  });
});
