/**
 * ArtifactProposal: an approver sets Approved (or Denied) on status; the operator carries it to Cortex /promote
 * (or deny) exactly once, records Promoted with the commit id and an Event, or Failed with a reason. A stale base
 * (Cortex answers 409) is Failed/Conflict and final; Cortex being down is retried with backoff. Before Cortex hears
 * of a decision the operator re-checks who made it (the proposer may not; the decider needs the approve verb, by a
 * SubjectAccessReview), as admission did: a refused decision is Failed and final, and Cortex is never called.
 */
import type { Logger } from "pino";
import {
  ArtifactProposalReason,
  type ArtifactProposalStatus,
  artifactProposalSpec,
} from "../api/v1alpha1/artifact-proposal.js";
import { CortexRejectedError, CortexUnavailableError } from "../cortex/client.js";
import type { CortexDirectory } from "../cortex/directory.js";
import type { Cache } from "../runtime/cache.js";
import { type ConditionInput, mergeConditions } from "../runtime/conditions.js";
import type { ReconcileResult } from "../runtime/controller.js";
import type { EventRecorder } from "../runtime/events.js";
import type { KubeClient, KubeObject } from "../runtime/kube-client.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import { splitKey } from "../runtime/owner.js";
import { applyStatusIfChanged, conditionTime } from "../runtime/status-writer.js";
import { parseSpec } from "../runtime/terminal-error.js";
import { approverRefusal } from "./approver-review.js";
import { decideProposal } from "./decision.js";

export interface ArtifactProposalObject extends KubeObject {
  spec?: unknown;
  status?: ArtifactProposalStatus;
}

export interface ArtifactProposalDeps {
  client: KubeClient;
  proposals: Cache<ArtifactProposalObject>;
  cortex: CortexDirectory;
  events: EventRecorder;
  metrics?: OperatorMetrics;
  now: () => number;
  log: Logger;
}

type Phase = NonNullable<ArtifactProposalStatus["phase"]>;

interface Outcome {
  phase: Phase;
  conditions: ConditionInput[];
  failure?: Error;
}

/** Reasons that refuse a decision; their Events carry the reason itself, for alerting on forged approvals. */
const refusals: ReadonlySet<string> = new Set([
  ArtifactProposalReason.ApproverIsProposer,
  ArtifactProposalReason.ApproverNotAuthorized,
]);

function notPromoted(reason: ArtifactProposalReason, message: string): ConditionInput[] {
  return [
    { type: "Ready", status: "False", reason, message },
    { type: "Promoted", status: "False", reason, message },
  ];
}

export class ArtifactProposalReconciler {
  constructor(private readonly deps: ArtifactProposalDeps) {}

  async reconcile(key: string): Promise<ReconcileResult | undefined> {
    const { namespace, name } = splitKey(key);
    const proposal = this.deps.proposals.get(namespace, name);
    if (proposal === undefined || proposal.metadata.deletionTimestamp !== undefined) {
      this.deps.metrics?.setProposalPending(namespace, name, undefined);
      return undefined;
    }
    const spec = parseSpec(artifactProposalSpec, proposal.spec);
    const generation = proposal.metadata.generation ?? 1;
    const previous = proposal.status;
    const decision = decideProposal(spec, previous, generation);
    const nowMs = this.deps.now();
    let phase: Phase = previous?.phase ?? "Pending";
    let promotion = previous?.promotion;
    let conditions: ConditionInput[];
    let failure: Error | undefined;

    switch (decision.action) {
      case "done":
        return undefined;
      case "await":
        phase = "Pending";
        conditions = [
          {
            type: "Ready",
            status: "False",
            reason: ArtifactProposalReason.AwaitingApproval,
            message: "waiting for an approver",
          },
          {
            type: "Promoted",
            status: "False",
            reason: ArtifactProposalReason.AwaitingApproval,
            message: "not approved yet",
          },
        ];
        break;
      case "stale":
        phase = "Failed";
        conditions = [
          {
            type: "Ready",
            status: "False",
            reason: ArtifactProposalReason.ApprovalStale,
            message: decision.message,
          },
          {
            type: "Promoted",
            status: "False",
            reason: ArtifactProposalReason.ApprovalStale,
            message: decision.message,
          },
        ];
        break;
      case "refuse":
        phase = "Failed";
        conditions = notPromoted(decision.reason, decision.message);
        break;
      case "promote": {
        const refused = await this.verifyDecider(decision.approvedBy, namespace, name, phase);
        if (refused !== undefined) {
          ({ phase, conditions, failure } = refused);
          break;
        }
        try {
          const cortex = await this.deps.cortex.clientFor(namespace, spec.applianceRef.name);
          const { commitId } = await cortex.promote(
            spec.proposalId,
            decision.approvedBy,
            spec.proposedDigest,
            spec.baseDigest,
          );
          phase = "Promoted";
          promotion = { commitId: commitId.slice(0, 64), promotedAt: conditionTime(nowMs) };
          conditions = [
            {
              type: "Ready",
              status: "True",
              reason: ArtifactProposalReason.Promoted,
              message: `committed ${commitId}`,
            },
            {
              type: "Promoted",
              status: "True",
              reason: ArtifactProposalReason.Promoted,
              message: `committed ${commitId}`,
            },
          ];
          this.deps.metrics?.proposalsPromoted.inc();
        } catch (error) {
          ({ phase, conditions, failure } = this.failed(error, "Approved"));
        }
        break;
      }
      case "deny": {
        const refused = await this.verifyDecider(decision.deniedBy, namespace, name, phase);
        if (refused !== undefined) {
          ({ phase, conditions, failure } = refused);
          break;
        }
        try {
          const cortex = await this.deps.cortex.clientFor(namespace, spec.applianceRef.name);
          await cortex.deny(spec.proposalId, decision.deniedBy, decision.comment);
          phase = "Denied";
          conditions = [
            {
              type: "Ready",
              status: "True",
              reason: ArtifactProposalReason.Denied,
              message: `denied by ${decision.deniedBy}`,
            },
            { type: "Promoted", status: "False", reason: ArtifactProposalReason.Denied, message: "denied" },
          ];
        } catch (error) {
          ({ phase, conditions, failure } = this.failed(error, "Denied"));
        }
        break;
      }
    }

    const status: ArtifactProposalStatus = {
      observedGeneration: generation,
      phase,
      conditions: mergeConditions(previous?.conditions, conditions, generation, conditionTime(nowMs)),
      ...(promotion ? { promotion } : {}),
    };
    await applyStatusIfChanged(this.deps.client, proposal, status);
    this.deps.metrics?.setProposalPending(
      namespace,
      name,
      phase === "Pending" ? proposal.metadata.creationTimestamp : undefined,
    );
    if (phase !== previous?.phase && phase !== "Pending") {
      const ready = conditions.find((condition) => condition.type === "Ready");
      await this.deps.events.record(proposal, {
        type: phase === "Failed" ? "Warning" : "Normal",
        reason: ready !== undefined && refusals.has(ready.reason) ? ready.reason : `Proposal${phase}`,
        action: phase === "Denied" || previous?.approval?.decision === "Denied" ? "Deny" : "Promote",
        note: ready?.message ?? phase,
      });
    }
    if (failure !== undefined) throw failure;
    return undefined;
  }

  /**
   * undefined when `decider` holds the approve verb on this proposal. A decider without it is Failed and final (as
   * a stale approval is); a review that could not be made keeps the phase and is retried.
   */
  private async verifyDecider(
    decider: string,
    namespace: string,
    name: string,
    phase: Phase,
  ): Promise<Outcome | undefined> {
    try {
      const refusal = await approverRefusal(this.deps.client, decider, namespace, name);
      if (refusal === undefined) return undefined;
      return {
        phase: "Failed",
        conditions: notPromoted(ArtifactProposalReason.ApproverNotAuthorized, refusal),
      };
    } catch (error) {
      const message = `could not verify ${decider}'s approve verb: ${error instanceof Error ? error.message : String(error)}`;
      return {
        phase,
        conditions: notPromoted(ArtifactProposalReason.ApprovalUnverified, message.slice(0, 1024)),
        failure: error instanceof Error ? error : new Error(message),
      };
    }
  }

  /** A refusal by Cortex is final (Failed); unavailability keeps the decision pending and retries. */
  private failed(
    error: unknown,
    pendingPhase: Phase,
  ): { phase: Phase; conditions: ConditionInput[]; failure?: Error } {
    const message = (error instanceof Error ? error.message : String(error)).slice(0, 1024);
    if (error instanceof CortexRejectedError) {
      const reason = error.status === 409 ? ArtifactProposalReason.Conflict : ArtifactProposalReason.Rejected;
      return {
        phase: "Failed",
        conditions: [
          { type: "Ready", status: "False", reason, message },
          { type: "Promoted", status: "False", reason, message },
        ],
      };
    }
    return {
      phase: pendingPhase,
      conditions: [
        { type: "Ready", status: "False", reason: ArtifactProposalReason.CortexUnavailable, message },
        { type: "Promoted", status: "False", reason: ArtifactProposalReason.CortexUnavailable, message },
      ],
      failure: error instanceof CortexUnavailableError ? error : new CortexUnavailableError(message),
    };
  }
}
