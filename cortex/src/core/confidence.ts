/**
 * The confidence model (seed 000 §5.4). Confidence is a number in [0, 1] that only weights recall; it never
 * gates execution. Rising events close a fraction of the remaining headroom (1 − c), falling events remove a
 * fraction of what is there, so every step stays inside [0, 1] and repeated evidence has diminishing returns.
 * docs/cortex-maturation.md explains each constant.
 */

export interface ConfidenceConstants {
  /** First assertion by reflection, before any reinforcement. */
  initial: number;
  /** Share of the headroom closed when reflection asserts an object again. */
  reinforcementGain: number;
  /** Share of the headroom closed when a tool result confirms an object (live evidence outranks recall). */
  toolConfirmationGain: number;
  /** Extra share closed when the reinforcement comes from a session that had not asserted it before. */
  crossSessionGain: number;
  /** Share closed for each dream cycle an object survives without being contradicted. */
  survivedDreamGain: number;
  /** Share of the confidence kept by a contradicted object (winner or loser). */
  contradictionRetained: number;
  /** Share kept when dream demotes an object. */
  demotionRetained: number;
  /** Days an object may go unreinforced before disuse decay starts. */
  disuseGraceDays: number;
  /** Half-life of confidence under disuse, in days, once the grace period is over. */
  disuseHalfLifeDays: number;
  /** Largest change one explicit reflection adjustment may make. */
  maxExplicitAdjustment: number;
}

export const defaultConfidenceConstants: ConfidenceConstants = {
  initial: 0.5,
  reinforcementGain: 0.15,
  toolConfirmationGain: 0.3,
  crossSessionGain: 0.1,
  survivedDreamGain: 0.02,
  contradictionRetained: 0.5,
  demotionRetained: 0.5,
  disuseGraceDays: 14,
  disuseHalfLifeDays: 30,
  maxExplicitAdjustment: 0.2,
};

/**
 * Confidence of what a person states themselves (an explicit save, a correction in the app). Their own directive is
 * the strongest evidence memory has (seed 001: what the person says outranks what a model derived), above the 0.8 a
 * reinforced object needs for an artifact, and far enough above reflection's 0.5 that one later inference cannot
 * silently overturn it (dream resolves a contradiction by evidence only within 0.25; a weaker newer claim becomes a
 * review item). Below 1: a correction by the same person still wins.
 */
export const userDirectiveConfidence = 0.9;

export type ConfidenceEvent =
  | { kind: "reinforcement"; newSession: boolean }
  | { kind: "toolConfirmation" }
  | { kind: "survivedDream" }
  | { kind: "contradiction" }
  | { kind: "demotion" }
  | { kind: "explicitAdjustment"; delta: number };

export function clampUnit(value: number): number {
  if (Number.isNaN(value)) return 0;
  return Math.min(1, Math.max(0, value));
}

function closeHeadroom(confidence: number, share: number): number {
  return confidence + share * (1 - confidence);
}

/** Confidence after one event. Total and bounded: any input in [0, 1] gives an output in [0, 1]. */
export function applyConfidenceEvent(
  confidence: number,
  event: ConfidenceEvent,
  constants: ConfidenceConstants = defaultConfidenceConstants,
): number {
  const c = clampUnit(confidence);
  switch (event.kind) {
    case "reinforcement": {
      const reinforced = closeHeadroom(c, constants.reinforcementGain);
      return clampUnit(event.newSession ? closeHeadroom(reinforced, constants.crossSessionGain) : reinforced);
    }
    case "toolConfirmation":
      return clampUnit(closeHeadroom(c, constants.toolConfirmationGain));
    case "survivedDream":
      return clampUnit(closeHeadroom(c, constants.survivedDreamGain));
    case "contradiction":
      return clampUnit(c * constants.contradictionRetained);
    case "demotion":
      return clampUnit(c * constants.demotionRetained);
    case "explicitAdjustment": {
      const bound = constants.maxExplicitAdjustment;
      const delta = Number.isFinite(event.delta) ? Math.min(bound, Math.max(-bound, event.delta)) : 0;
      return clampUnit(c + delta);
    }
  }
}

const dayMs = 86_400_000;

function daysBetween(from: string, to: string): number {
  return (Date.parse(to) - Date.parse(from)) / dayMs;
}

/**
 * Disuse decay for one sweep at `now`. Only idle time past the grace period counts, and only the part of it
 * after the previous sweep (`lastDecayedAt`), so running dream twice in a row never decays twice.
 */
export function decayForDisuse(
  confidence: number,
  timing: { lastReinforcedAt: string; lastDecayedAt?: string | undefined; now: string },
  constants: ConfidenceConstants = defaultConfidenceConstants,
): number {
  const c = clampUnit(confidence);
  const decayStart = Date.parse(timing.lastReinforcedAt) + constants.disuseGraceDays * dayMs;
  const previousSweep = timing.lastDecayedAt === undefined ? 0 : Date.parse(timing.lastDecayedAt);
  const from = Math.max(decayStart, previousSweep);
  const decayDays = (Date.parse(timing.now) - from) / dayMs;
  if (!(decayDays > 0)) return c;
  return clampUnit(c * 2 ** (-decayDays / constants.disuseHalfLifeDays));
}

/** Days (fractional) an object has gone without reinforcement at `now`; never negative. */
export function idleDays(lastReinforcedAt: string, now: string): number {
  return Math.max(0, daysBetween(lastReinforcedAt, now));
}
