/**
 * Deciding an ArtifactProposal, the pure half that kubectl remram and remram-app share: why a proposal cannot be
 * decided now, and the /status JSON patch a decision is. Both send it with the deciding person's own credential, so
 * the approval policy (approval-policy.ts) and the operator's re-check judge that person.
 */
import type { ArtifactProposalSpec, ArtifactProposalStatus, Decision } from "./v1alpha1/artifact-proposal.js";
import type { Condition } from "./v1alpha1/common.js";

/** The tool a person decided with, named in the decision's condition. */
export type DecisionTool = "kubectl remram" | "remram-app";
const decisionReasons: Record<DecisionTool, string> = {
  "kubectl remram": "KubectlRemram",
  "remram-app": "RemramApp",
};

export interface ProposalView {
  metadata: { name: string; generation?: number };
  spec: ArtifactProposalSpec;
  status?: ArtifactProposalStatus;
}

/**
 * Why this proposal cannot be decided now, or undefined. The admission policy enforces the same rules; checking
 * first gives a clearer message than the API server's.
 */
export function decisionBlocker(proposal: ProposalView, username: string): string | undefined {
  const { name } = proposal.metadata;
  const status = proposal.status;
  const phase = status?.phase;
  if (status?.approval !== undefined) {
    const { decision, by, at } = status.approval;
    return `${name} was already ${decision.toLowerCase()} by ${by} at ${at} (phase ${phase ?? "not set yet"}); a decision is final`;
  }
  if (phase !== undefined && phase !== "Pending") {
    const ready = status?.conditions?.find((condition) => condition.type === "Ready");
    const why = ready?.message ? ` (${ready.reason}: ${ready.message})` : ready ? ` (${ready.reason})` : "";
    return `${name} is ${phase}, not Pending${why}; only a Pending proposal can be approved or denied`;
  }
  if (status === undefined || status.conditions === undefined) {
    return `${name} has no status yet: the operator has not picked it up (is it running?)`;
  }
  if (proposal.spec.proposedBy === username)
    return `you (${username}) proposed ${name}; someone else must decide`;
  return undefined;
}

/**
 * The JSON patch for /status: append the decision condition and record who decided, on which generation and
 * digest. A test op on the conditions' length makes a concurrent edit fail instead of being overwritten.
 */
export function decisionPatch(
  proposal: ProposalView,
  decision: Decision,
  username: string,
  nowIso: string,
  comment?: string,
  via: DecisionTool = "kubectl remram",
): unknown[] {
  const conditions = proposal.status?.conditions ?? [];
  const condition: Condition = {
    type: decision,
    status: "True",
    reason: decisionReasons[via],
    message: `${decision.toLowerCase()} with ${via}${comment ? `: ${comment}` : ""}`.slice(0, 32768),
    lastTransitionTime: nowIso,
    observedGeneration: proposal.metadata.generation ?? 1,
  };
  return [
    { op: "test", path: "/status/conditions", value: conditions },
    { op: "add", path: "/status/conditions/-", value: condition },
    {
      op: "add",
      path: "/status/approval",
      value: {
        decision,
        by: username,
        at: nowIso,
        generation: proposal.metadata.generation ?? 1,
        proposedDigest: proposal.spec.proposedDigest,
        ...(comment ? { comment } : {}),
      },
    },
  ];
}
