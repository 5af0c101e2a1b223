import { describe, expect, it } from "vitest";
import { knowledgeObject } from "../testing/fixtures.js";
import { sweepDecay } from "./decay.js";

const reinforced = "2026-01-01T00:00:00.000Z";

describe("decay sweep", () => {
  it("leaves a recently reinforced object untouched", () => {
    const object = knowledgeObject({ id: "k", lastReinforcedAt: reinforced });
    expect(sweepDecay(object, "2026-01-10T00:00:00.000Z")).toEqual({
      object,
      decayed: false,
      demoted: false,
    });
  });

  it("decays an idle object but keeps it eligible while above the threshold", () => {
    const object = knowledgeObject({ id: "k", confidence: 0.8, lastReinforcedAt: reinforced });
    const { object: after, decayed, demoted } = sweepDecay(object, "2026-02-14T00:00:00.000Z");
    expect({ decayed, demoted, state: after.state }).toEqual({
      decayed: true,
      demoted: false,
      state: "active",
    });
    expect(after.confidence).toBeCloseTo(0.4, 10);
    expect(after.lastDecayedAt).toBe("2026-02-14T00:00:00.000Z");
  });

  it("demotes a one-off remark left idle for two months, keeping it stored", () => {
    const object = knowledgeObject({ id: "k", confidence: 0.5, lastReinforcedAt: reinforced });
    const { object: after, demoted } = sweepDecay(object, "2026-03-02T00:00:00.000Z");
    expect(demoted).toBe(true);
    expect(after).toMatchObject({ id: "k", state: "demoted", statement: object.statement });
    expect(after.invalidAt).toBeUndefined();
  });

  it("never demotes an object already promoted into an artifact", () => {
    const object = knowledgeObject({
      id: "k",
      confidence: 0.3,
      lastReinforcedAt: reinforced,
      promotion: "promoted",
    });
    expect(sweepDecay(object, "2027-01-01T00:00:00.000Z").demoted).toBe(false);
  });

  it("does nothing on a second sweep at the same instant", () => {
    const object = knowledgeObject({ id: "k", confidence: 0.8, lastReinforcedAt: reinforced });
    const once = sweepDecay(object, "2026-02-14T00:00:00.000Z").object;
    expect(sweepDecay(once, "2026-02-14T00:00:00.000Z")).toEqual({
      object: once,
      decayed: false,
      demoted: false,
    });
  });
});

describe("decay write interval", () => {
  it("skips an object decayed less than a week ago, and catches up exactly afterwards", () => {
    const object = knowledgeObject({ id: "k", confidence: 0.8, lastReinforcedAt: reinforced });
    const first = sweepDecay(object, "2026-02-14T00:00:00.000Z").object;
    expect(sweepDecay(first, "2026-02-17T00:00:00.000Z").decayed).toBe(false);
    const caughtUp = sweepDecay(first, "2026-02-21T00:00:00.000Z").object;
    const direct = sweepDecay(object, "2026-02-21T00:00:00.000Z").object;
    expect(caughtUp.confidence).toBeCloseTo(direct.confidence, 12);
  });
});
