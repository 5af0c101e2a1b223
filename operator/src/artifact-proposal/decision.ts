/**
 * What the operator should do with an ArtifactProposal, pure: promote only an approval made on the current
 * generation and digest, carry a denial to Cortex once, and never act twice. A decision by the proposer is refused
 * here as well as at admission: the admission policy may be missing or edited, and status is then anyone's to patch
 * who may patch it. (Whether the decider holds the approve verb needs the API server: approver-review.ts.)
 */
import {
  ArtifactProposalReason,
  type ArtifactProposalSpec,
  type ArtifactProposalStatus,
} from "../api/v1alpha1/artifact-proposal.js";
import { isTrue } from "../runtime/conditions.js";

export type ProposalAction =
  | { action: "await" }
  | { action: "promote"; approvedBy: string }
  | { action: "deny"; deniedBy: string; comment?: string }
  | { action: "stale"; message: string }
  | { action: "refuse"; reason: ArtifactProposalReason; message: string }
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
  if ((approved || denied) && approval !== undefined && approval.by === spec.proposedBy) {
    return {
      action: "refuse",
      reason: ArtifactProposalReason.ApproverIsProposer,
      message: `${approval.by} proposed this change and cannot decide on it; another approver must`,
    };
  }
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
