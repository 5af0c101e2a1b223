/**
 * Whether an appliance's vectors are current, from Cortex's GET /admin/embeddings (read by a CortexWatch): the
 * status.embeddings and EmbeddingsCurrent condition. After a change of spec.ollama.models' embedding model or
 * dimensions Cortex re-embeds everything; the operator asks often while that runs, so a person watching
 * `kubectl get remramappliance -w` sees it move.
 */
import type { EmbeddingStatus } from "@remram/contract";
import { ApplianceReason, type RemramApplianceStatus } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";
import { notReadYetCondition } from "./cortex-watch.js";

export type EmbeddingsStatus = NonNullable<RemramApplianceStatus["embeddings"]>;

export const conditionType = "EmbeddingsCurrent";
/** How often Cortex is asked while a re-embedding runs (or Cortex is still starting). */
export const movingPollMs = 15_000;
/** How often once the vectors are current: a model change restarts Cortex, which the reconcile sees anyway. */
export const settledPollMs = 3_600_000;

export function embeddingsStatus(status: EmbeddingStatus): EmbeddingsStatus {
  const { replacing, waiting } = status;
  return {
    ...(status.model === null ? {} : { model: status.model }),
    dimensions: status.dimensions,
    state: status.state,
    ...(replacing ? { replacing: `${replacing.model} (${replacing.dimensions} dimensions)` } : {}),
    done: status.objects.done + status.chunks.done,
    total: status.objects.total + status.chunks.total,
    ...(waiting ? { waiting } : {}),
  };
}

export function embeddingsCondition(status: EmbeddingsStatus | undefined): ConditionInput {
  const base = { type: conditionType };
  if (status === undefined || status.state === "starting") return notReadYetCondition(conditionType);
  if (status.state === "none") {
    return {
      ...base,
      status: "True",
      reason: ApplianceReason.NoEmbeddingModel,
      message: "no embedding model: retrieval is by words only",
    };
  }
  const model = `${status.model} (${status.dimensions} dimensions)`;
  if (status.state === "current") {
    return {
      ...base,
      status: "True",
      reason: ApplianceReason.EmbeddingsCurrent,
      message: `every stored object and chunk has its vector of ${model}`,
    };
  }
  const percent = status.total === 0 ? 0 : Math.floor((status.done / status.total) * 100);
  const waiting = status.waiting === undefined ? "" : `; paused: ${status.waiting}`;
  return {
    ...base,
    status: "False",
    reason: ApplianceReason.Reembedding,
    message:
      `re-embedding with ${model}${status.replacing ? ` instead of ${status.replacing}` : ""}: ${status.done} of ${status.total} (${percent}%); what is not re-embedded yet is found by its words only${waiting}`.slice(
        0,
        1024,
      ),
  };
}

/**
 * How soon to ask again: every 15 s while a re-embedding runs (or Cortex is still starting, or still reports
 * another model than the spec gives it), hourly once the vectors are current.
 */
export function embeddingsPollMs(
  status: EmbeddingsStatus | undefined,
  wanted: { model: string; dimensions: number },
): number {
  const moving =
    status === undefined ||
    status.state === "starting" ||
    status.state === "reembedding" ||
    status.model !== wanted.model ||
    status.dimensions !== wanted.dimensions;
  return moving ? movingPollMs : settledPollMs;
}
