import { describe, expect, it } from "vitest";
import type { ArtifactProposalSpec, ArtifactProposalStatus } from "../api/v1alpha1/artifact-proposal.js";
import { decideProposal } from "./decision.js";

const digest = `sha256:${"a".repeat(64)}`;
const spec: ArtifactProposalSpec = {
  applianceRef: { name: "box" },
  proposalId: "p-1",
  artifactPath: "notes/house.md",
  proposedDigest: digest,
  diff: "+x",
  rationale: "r",
  proposedBy: "system:serviceaccount:remram-system:remram-operator",
};
const at = "2026-01-01T00:00:00Z";

function decided(
  decision: "Approved" | "Denied",
  overrides: Partial<NonNullable<ArtifactProposalStatus["approval"]>> = {},
) {
  return {
    phase: "Pending" as const,
    conditions: [
      {
        type: decision,
        status: "True" as const,
        reason: "KubectlRemram",
        message: "",
        lastTransitionTime: at,
      },
    ],
    approval: { decision, by: "alice", at, generation: 1, proposedDigest: digest, ...overrides },
  };
}

describe("what the operator does with a proposal", () => {
  it("waits while nobody has decided", () => {
    expect(decideProposal(spec, undefined, 1)).toEqual({ action: "await" });
  });

  it("promotes an approval made on the current generation and digest", () => {
    expect(decideProposal(spec, decided("Approved"), 1)).toEqual({ action: "promote", approvedBy: "alice" });
  });

  it("refuses an approval made on another generation or digest", () => {
    expect(decideProposal(spec, decided("Approved", { generation: 2 }), 1).action).toBe("stale");
    expect(
      decideProposal(spec, decided("Approved", { proposedDigest: `sha256:${"b".repeat(64)}` }), 1).action,
    ).toBe("stale");
  });

  it("refuses a decision by the proposer, approval or denial, before anything else", () => {
    const byProposer = { by: spec.proposedBy };
    for (const decision of ["Approved", "Denied"] as const) {
      expect(decideProposal(spec, decided(decision, byProposer), 1)).toMatchObject({
        action: "refuse",
        reason: "ApproverIsProposer",
      });
    }
    expect(decideProposal(spec, decided("Approved", { ...byProposer, generation: 2 }), 1).action).toBe(
      "refuse",
    );
  });

  it("carries a denial with its comment", () => {
    expect(decideProposal(spec, decided("Denied", { comment: "no" }), 1)).toEqual({
      action: "deny",
      deniedBy: "alice",
      comment: "no",
    });
  });

  it("never acts twice: a promoted, denied or failed proposal is done", () => {
    const promoted = { ...decided("Approved"), promotion: { commitId: "abcdef1", promotedAt: at } };
    expect(decideProposal(spec, promoted, 1)).toEqual({ action: "done" });
    expect(decideProposal(spec, { ...decided("Denied"), phase: "Denied" }, 1)).toEqual({ action: "done" });
    expect(decideProposal(spec, { ...decided("Approved"), phase: "Failed" }, 1)).toEqual({ action: "done" });
  });
});
