import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  applyConfidenceEvent,
  type ConfidenceEvent,
  decayForDisuse,
  defaultConfidenceConstants as k,
} from "./confidence.js";

const unit = fc.double({ min: 0, max: 1, noNaN: true });
const event: fc.Arbitrary<ConfidenceEvent> = fc.oneof(
  fc.record({ kind: fc.constant("reinforcement" as const), newSession: fc.boolean() }),
  fc.constant({ kind: "toolConfirmation" as const }),
  fc.constant({ kind: "survivedDream" as const }),
  fc.constant({ kind: "contradiction" as const }),
  fc.constant({ kind: "demotion" as const }),
  fc.record({ kind: fc.constant("explicitAdjustment" as const), delta: fc.double({ min: -5, max: 5 }) }),
);
const rising: ConfidenceEvent["kind"][] = ["reinforcement", "toolConfirmation", "survivedDream"];

describe("confidence model", () => {
  it("keeps confidence inside [0, 1] for any sequence of events", () => {
    fc.assert(
      fc.property(unit, fc.array(event, { maxLength: 50 }), (start, events) => {
        const end = events.reduce((c, e) => applyConfidenceEvent(c, e), start);
        return end >= 0 && end <= 1;
      }),
    );
  });

  it("never lowers confidence on reinforcement, tool confirmation or surviving dream", () => {
    fc.assert(
      fc.property(unit, event, (c, e) => {
        fc.pre(rising.includes(e.kind));
        return applyConfidenceEvent(c, e) >= c;
      }),
    );
  });

  it("never raises confidence on contradiction or demotion", () => {
    fc.assert(
      fc.property(unit, fc.constantFrom("contradiction" as const, "demotion" as const), (c, kind) => {
        return applyConfidenceEvent(c, { kind }) <= c;
      }),
    );
  });

  it("gives diminishing returns: the same reinforcement adds less the higher confidence already is", () => {
    const low = applyConfidenceEvent(0.3, { kind: "reinforcement", newSession: false }) - 0.3;
    const high = applyConfidenceEvent(0.8, { kind: "reinforcement", newSession: false }) - 0.8;
    expect(low).toBeGreaterThan(high);
    expect(high).toBeGreaterThan(0);
  });

  it("rewards a reinforcement from a new session more than one from a session that said it before", () => {
    const sameSession = applyConfidenceEvent(0.5, { kind: "reinforcement", newSession: false });
    const newSession = applyConfidenceEvent(0.5, { kind: "reinforcement", newSession: true });
    expect(sameSession).toBeCloseTo(0.5 + k.reinforcementGain * 0.5, 10);
    expect(newSession).toBeGreaterThan(sameSession);
  });

  it("weights a tool confirmation above a plain reinforcement", () => {
    expect(applyConfidenceEvent(0.5, { kind: "toolConfirmation" })).toBeGreaterThan(
      applyConfidenceEvent(0.5, { kind: "reinforcement", newSession: false }),
    );
  });

  it("halves confidence on contradiction", () => {
    expect(applyConfidenceEvent(0.8, { kind: "contradiction" })).toBeCloseTo(0.4, 10);
  });

  it("bounds an explicit adjustment to the configured maximum in either direction", () => {
    expect(applyConfidenceEvent(0.5, { kind: "explicitAdjustment", delta: 0.9 })).toBeCloseTo(0.7, 10);
    expect(applyConfidenceEvent(0.5, { kind: "explicitAdjustment", delta: -0.9 })).toBeCloseTo(0.3, 10);
    expect(applyConfidenceEvent(0.5, { kind: "explicitAdjustment", delta: Number.NaN })).toBe(0.5);
  });

  it("treats NaN and out-of-range inputs as clamped values", () => {
    expect(applyConfidenceEvent(Number.NaN, { kind: "survivedDream" })).toBeCloseTo(k.survivedDreamGain, 10);
    expect(applyConfidenceEvent(7, { kind: "demotion" })).toBe(k.demotionRetained);
  });
});

describe("disuse decay", () => {
  const reinforced = "2026-01-01T00:00:00.000Z";

  it("leaves confidence alone during the grace period", () => {
    expect(decayForDisuse(0.6, { lastReinforcedAt: reinforced, now: "2026-01-14T00:00:00.000Z" })).toBe(0.6);
  });

  it("halves confidence one half-life after the grace period ends", () => {
    const now = "2026-02-14T00:00:00.000Z"; // 44 days idle = 14 grace + 30 half-life
    expect(decayForDisuse(0.6, { lastReinforcedAt: reinforced, now })).toBeCloseTo(0.3, 10);
  });

  it("never decays the same idle days twice across consecutive sweeps", () => {
    const timing = { lastReinforcedAt: reinforced, now: "2026-02-14T00:00:00.000Z" };
    const once = decayForDisuse(0.6, timing);
    const again = decayForDisuse(once, { ...timing, lastDecayedAt: timing.now });
    expect(again).toBe(once);
  });

  it("gives the same result whether the idle time is swept once or in many steps", () => {
    fc.assert(
      fc.property(
        unit,
        fc.array(fc.integer({ min: 1, max: 20 }), { minLength: 1, maxLength: 10 }),
        (c, steps) => {
          const start = Date.parse(reinforced);
          let swept = c;
          let last: string | undefined;
          let day = 0;
          for (const step of steps) {
            day += step;
            const now = new Date(start + day * 86_400_000).toISOString();
            swept = decayForDisuse(swept, { lastReinforcedAt: reinforced, lastDecayedAt: last, now });
            last = now;
          }
          const direct = decayForDisuse(c, {
            lastReinforcedAt: reinforced,
            now: new Date(start + day * 86_400_000).toISOString(),
          });
          return Math.abs(swept - direct) < 1e-9;
        },
      ),
    );
  });
});
