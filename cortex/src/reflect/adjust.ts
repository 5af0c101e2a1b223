import type { ConfidenceAdjustment } from "@remram/contract";
import { applyConfidenceEvent, type ConfidenceConstants } from "../core/confidence.js";
import { type MaturingObject, sortedUnion } from "../core/knowledge.js";

/**
 * A confidence adjustment by id (the run saw the object in its bundle), applied through the confidence rules
 * (core/confidence.ts), never by setting a number:
 * - reinforce: the conversation asserted it again — a reinforcement (cross-session when this session had not
 *   asserted it), counted like an item that matched it, and a demoted object is revived;
 * - weaken: the conversation put it in doubt — the largest explicit step down (`maxExplicitAdjustment`);
 * - contradict: the conversation said it is wrong but gave no replacement — the contradiction event (halved); its
 *   validity stays, as reflection is additive: a correction ends validity, dream resolves contradictions;
 * - delta: a raw explicit adjustment, bounded by `maxExplicitAdjustment`.
 * Returns undefined for an invalidated object: its validity ended, and no conversation revives it by id.
 */
export function adjustConfidence(
  target: MaturingObject,
  adjustment: ConfidenceAdjustment,
  sessionId: string,
  now: string,
  constants: ConfidenceConstants,
): MaturingObject | undefined {
  if (target.state === "invalidated" || target.invalidAt !== undefined) return undefined;
  const explicit = (delta: number): MaturingObject => ({
    ...target,
    confidence: applyConfidenceEvent(target.confidence, { kind: "explicitAdjustment", delta }, constants),
    updatedAt: now,
  });
  switch (adjustment.effect) {
    case "reinforce":
      return {
        ...target,
        confidence: applyConfidenceEvent(
          target.confidence,
          { kind: "reinforcement", newSession: !target.sessionIds.includes(sessionId) },
          constants,
        ),
        reinforcementCount: target.reinforcementCount + 1,
        sessionIds: sortedUnion(target.sessionIds, [sessionId]),
        sourceTurnIds: sortedUnion(target.sourceTurnIds, adjustment.sourceTurnIds),
        lastReinforcedAt: now,
        updatedAt: now,
        state: "active",
      };
    case "weaken":
      return explicit(-constants.maxExplicitAdjustment);
    case "contradict":
      return {
        ...target,
        confidence: applyConfidenceEvent(target.confidence, { kind: "contradiction" }, constants),
        updatedAt: now,
      };
    case undefined:
      return explicit(adjustment.delta ?? 0);
  }
}
