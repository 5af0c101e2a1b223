import {
  applyConfidenceEvent,
  type ConfidenceConstants,
  decayForDisuse,
  defaultConfidenceConstants,
  idleDays,
} from "../core/confidence.js";
import { isLive, type MaturingObject } from "../core/knowledge.js";

/**
 * Decay and demotion (seed 000 §5.9): confidence of unreinforced objects decays with disuse, and an object
 * whose confidence falls below the demotion threshold leaves retrieval eligibility (state "demoted"). It stays
 * stored and auditable, and a later reinforcement revives it.
 */

export interface DecayOptions {
  /** Below this confidence an idle object is demoted; matches DimensionPolicy eligibility.minConfidence (0.2). */
  demotionThreshold: number;
  /**
   * Days between two decay writes of one object. Decay is path-independent (one sweep or many give the same
   * confidence), so waiting loses nothing, and daily cycles rewrite about a seventh of the idle objects.
   */
  minDecayIntervalDays: number;
  confidence: ConfidenceConstants;
}

export const defaultDecayOptions: DecayOptions = {
  demotionThreshold: 0.2,
  minDecayIntervalDays: 7,
  confidence: defaultConfidenceConstants,
};

export interface DecayOutcome {
  object: MaturingObject;
  decayed: boolean;
  demoted: boolean;
}

/**
 * One object through the decay sweep at `now`. Objects inside the grace period, not live, or already promoted
 * into a reviewed artifact are left unchanged (an approved artifact is retired by a person, not by disuse).
 */
export function sweepDecay(
  object: MaturingObject,
  now: string,
  options: DecayOptions = defaultDecayOptions,
): DecayOutcome {
  const unchanged = { object, decayed: false, demoted: false };
  if (!isLive(object) || object.promotion === "promoted") return unchanged;
  if (idleDays(object.lastReinforcedAt, now) <= options.confidence.disuseGraceDays) return unchanged;
  if (
    object.lastDecayedAt !== undefined &&
    idleDays(object.lastDecayedAt, now) < options.minDecayIntervalDays
  ) {
    return unchanged;
  }
  const decayedConfidence = decayForDisuse(object.confidence, { ...object, now }, options.confidence);
  const decayed = decayedConfidence < object.confidence;
  if (decayedConfidence >= options.demotionThreshold) {
    if (!decayed) return unchanged;
    return {
      object: { ...object, confidence: decayedConfidence, lastDecayedAt: now, updatedAt: now },
      decayed,
      demoted: false,
    };
  }
  return {
    object: {
      ...object,
      confidence: applyConfidenceEvent(decayedConfidence, { kind: "demotion" }, options.confidence),
      state: "demoted",
      lastDecayedAt: now,
      updatedAt: now,
    },
    decayed,
    demoted: true,
  };
}
