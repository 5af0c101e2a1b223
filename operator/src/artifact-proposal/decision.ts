/**
 * What the operator should do with an ArtifactProposal, pure: promote only an approval made on the current
 * generation and digest, carry a denial to Cortex once, and never act twice.
 */
import type { ArtifactProposalSpec, ArtifactProposalStatus } from "../api/v1alpha1/artifact-proposal.js";
import { isTrue } from "../runtime/conditions.js";

export type ProposalAction =
  | { action: "await" }
  | { action: "promote"; approvedBy: string }
  | { action: "deny"; deniedBy: string; comment?: string }
  | { action: "stale"; message: string }
  | { action: "done" };

export function decideProposal(
  spec: ArtifactProposalSpec,
  status: ArtifactProposalStatus | undefined,
  generation: number,
): ProposalAction {
  if (status?.promotion !== undefined || status?.phase === "Denied" || status?.phase === "Failed") {
    return { action: "done" };
  }
  const approval = status?.approval;
  const approved = isTrue(status?.conditions, "Approved");
  const denied = isTrue(status?.conditions, "Denied");
  if (approved && approval?.decision === "Approved") {
    if (approval.generation !== generation || approval.proposedDigest !== spec.proposedDigest) {
      return {
        action: "stale",
        message: "the approval names another generation or digest than the proposal has",
      };
    }
    return { action: "promote", approvedBy: approval.by };
  }
  if (denied && approval?.decision === "Denied") {
    return {
      action: "deny",
      deniedBy: approval.by,
      ...(approval.comment ? { comment: approval.comment } : {}),
    };
  }
  return { action: "await" };
}
