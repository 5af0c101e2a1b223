/**
 * metav1.Condition bookkeeping, pure: conditions are a map keyed by type, lastTransitionTime moves only when the
 * status flips, and every condition carries the generation it was computed for.
 */
import type { Condition, ConditionStatus } from "../api/v1alpha1/common.js";

export interface ConditionInput {
  type: string;
  status: ConditionStatus;
  reason: string;
  message: string;
}

/** Desired conditions merged into the current list; order follows `desired`, then untouched current entries. */
export function mergeConditions(
  current: readonly Condition[] | undefined,
  desired: readonly ConditionInput[],
  generation: number,
  now: string,
): Condition[] {
  const byType = new Map((current ?? []).map((condition) => [condition.type, condition]));
  const merged: Condition[] = desired.map((input) => {
    const previous = byType.get(input.type);
    const flipped = previous === undefined || previous.status !== input.status;
    return {
      type: input.type,
      status: input.status,
      observedGeneration: generation,
      lastTransitionTime: flipped ? now : previous.lastTransitionTime,
      reason: input.reason,
      message: input.message,
    };
  });
  const desiredTypes = new Set(desired.map((input) => input.type));
  for (const condition of current ?? []) if (!desiredTypes.has(condition.type)) merged.push(condition);
  return merged;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((condition) => condition.type === type);
}

export function isTrue(conditions: readonly Condition[] | undefined, type: string): boolean {
  return findCondition(conditions, type)?.status === "True";
}

/** Conditions whose status flipped (or that appeared) between two lists: the moments worth an Event. */
export function transitions(
  before: readonly Condition[] | undefined,
  after: readonly Condition[],
): Condition[] {
  return after.filter((condition) => findCondition(before, condition.type)?.status !== condition.status);
}

/**
 * Ready summarises component conditions: True when all are True, otherwise the first non-True one explains why
 * (False beats Unknown, so a failure is named before something merely pending).
 */
export function summarizeReady(components: readonly ConditionInput[], readyMessage: string): ConditionInput {
  const failed = components.find((condition) => condition.status === "False");
  const pending = components.find((condition) => condition.status === "Unknown");
  const blocking = failed ?? pending;
  if (blocking === undefined)
    return { type: "Ready", status: "True", reason: "Ready", message: readyMessage };
  return {
    type: "Ready",
    status: blocking.status,
    reason: blocking.reason,
    message: `${blocking.type}: ${blocking.message}`,
  };
}
