import type { ReflectionJob } from "./reflection.js";
import { parseReflectionReply } from "./reflection.js";
import {
  CortexReflectionDeltaSchema,
  type DroppedParts,
  type ReflectRequest,
  reflectionToCortex,
} from "./reflection-cortex.js";

/**
 * What the service does with a finished reflection run's reply. Pure: the reply, the job and how many of the job's
 * replies were malformed before decide it. A malformed reply (no JSON object, cut off, or not the delta's shape) is
 * asked for once more in a fresh run, then the job is dropped; nothing of a malformed reply is ever queued.
 */
export type ReplyAction =
  | { action: "retry"; error: string }
  | { action: "drop"; error: string }
  | { action: "queue"; request: ReflectRequest; parts: Record<string, number> };

/** Malformed replies one job may give before it is dropped: the first is asked again, once. */
export const maxInvalidReplies = 2;

export function reflectionReplyAction(params: {
  reply: string;
  job: ReflectionJob;
  /** Replies of this job that were malformed before this one. */
  invalidBefore: number;
  /** Whether a statement only restates what the run was shown (injected-content.ts). */
  isInjected: (statement: string) => boolean;
}): ReplyAction {
  const { job } = params;
  const invalid = (error: string): ReplyAction =>
    params.invalidBefore + 1 >= maxInvalidReplies ? { action: "drop", error } : { action: "retry", error };
  const parsed = parseReflectionReply(params.reply);
  if (!parsed.ok) return invalid(parsed.error);
  const { delta, dropped } = reflectionToCortex(parsed.delta, job, params.isInjected);
  // The conversion builds Cortex's delta from validated parts; checked all the same, so the queue never holds a
  // delta Cortex would refuse as malformed.
  const checked = CortexReflectionDeltaSchema.safeParse(delta);
  if (!checked.success) {
    return invalid(checked.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; "));
  }
  return {
    action: "queue",
    request: { principal: job.principal, delta: checked.data },
    parts: deltaParts(checked.data, dropped),
  };
}

/** The counter labels of a queued delta: each kind it holds, and what was left out of the reply, by reason. */
export function deltaParts(delta: ReflectRequest["delta"], dropped: DroppedParts): Record<string, number> {
  const parts: Record<string, number> = {};
  const add = (label: string, count: number) => {
    if (count > 0) parts[label] = (parts[label] ?? 0) + count;
  };
  for (const item of delta.items) add(`item_${item.type}`, 1);
  for (const correction of delta.corrections) {
    add(correction.replacement === undefined ? "correction" : "update", 1);
    if (correction.replacement !== undefined && correction.replacement.scope.kind === "household")
      add("household_item", 1);
  }
  for (const item of delta.items) if (item.scope.kind === "household") add("household_item", 1);
  for (const adjustment of delta.confidenceAdjustments) add(`adjustment_${adjustment.effect ?? "delta"}`, 1);
  for (const link of delta.links) add(`link_${link.relation}`, 1);
  add("candidate_dimension", delta.candidateDimensions.length);
  add(
    "claim",
    [...delta.items, ...delta.corrections.flatMap((c) => c.replacement ?? [])].filter((i) => i.claim).length,
  );
  add("dropped_injected", dropped.injected);
  add("dropped_unresolved", dropped.unresolved);
  add("dropped_redundant", dropped.redundant);
  add("dropped_ungrounded", dropped.ungrounded);
  add("dropped_not_knowledge", dropped.notKnowledge);
  return parts;
}
