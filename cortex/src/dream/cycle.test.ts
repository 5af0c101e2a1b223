import { dreamCountNames } from "@remram/contract";
import { describe, expect, it } from "vitest";
import type { MaturingObject } from "../core/knowledge.js";
import { knowledgeObject } from "../testing/fixtures.js";
import {
  beginDreamCycle,
  type DreamInput,
  defaultDreamOptions,
  dreamReport,
  finishDreamCycle,
  planDreamCycle,
} from "./cycle.js";

const now = "2026-03-01T00:00:00.000Z";

function input(objects: MaturingObject[], overrides: Partial<DreamInput> = {}): DreamInput {
  return {
    cycleId: "c1",
    now,
    objects,
    pairs: [],
    candidateDimensions: [],
    canonicalDimensions: ["project"],
    artifacts: new Map(),
    ...overrides,
  };
}

describe("dream cycle plan", () => {
  const claim = (object: string) => ({ subject: "alice", predicate: "prefers drink", object });

  it("invalidates the older side of a decided contradiction and links both ways", () => {
    const tea = knowledgeObject({
      id: "tea",
      type: "preference",
      claim: claim("tea"),
      lastReinforcedAt: "2026-02-01T00:00:00.000Z",
      updatedAt: "2026-02-01T00:00:00.000Z",
    });
    const coffee = knowledgeObject({
      id: "coffee",
      type: "preference",
      claim: claim("coffee"),
      lastReinforcedAt: "2026-02-20T00:00:00.000Z",
      updatedAt: "2026-02-20T00:00:00.000Z",
    });
    const plan = planDreamCycle(input([tea, coffee]));
    const byId = new Map(plan.writes.map((o) => [o.id, o]));
    expect(byId.get("tea")).toMatchObject({
      state: "invalidated",
      invalidAt: now,
      links: [{ relation: "supersededBy", targetId: "coffee" }],
    });
    expect(byId.get("coffee")).toMatchObject({
      state: "active",
      links: [{ relation: "supersedes", targetId: "tea" }],
    });
    expect(plan.counts).toMatchObject({
      contradictionsDetected: 1,
      contradictionsResolved: 1,
      invalidated: 1,
      reviewItems: 0,
    });
  });

  it("turns an undecidable contradiction into a review item and changes neither side", () => {
    const established = knowledgeObject({
      id: "a",
      type: "preference",
      claim: claim("tea"),
      confidence: 0.95,
      lastReinforcedAt: "2026-02-01T00:00:00.000Z",
    });
    const weak = knowledgeObject({
      id: "b",
      type: "preference",
      claim: claim("coffee"),
      confidence: 0.5,
      lastReinforcedAt: "2026-02-20T00:00:00.000Z",
    });
    const plan = planDreamCycle(input([established, weak]));
    expect(plan.reviewItems).toEqual([
      expect.objectContaining({ kind: "contradiction", objectIds: ["a", "b"] }),
    ]);
    expect(plan.writes.filter((o) => o.state !== "active")).toEqual([]);
  });

  it("rewards objects that changed since the last cycle and were not contradicted", () => {
    const fresh = knowledgeObject({
      id: "k",
      updatedAt: "2026-02-28T00:00:00.000Z",
      lastReinforcedAt: "2026-02-28T00:00:00.000Z",
    });
    const plan = planDreamCycle(input([fresh], { changedSince: "2026-02-27T00:00:00.000Z" }));
    expect(plan.counts.survived).toBe(1);
    expect(plan.writes[0]?.confidence).toBeGreaterThan(fresh.confidence);
  });

  it("decays and demotes idle weak objects in the sweep", () => {
    const remark = knowledgeObject({
      id: "remark",
      confidence: 0.5,
      lastReinforcedAt: "2025-12-01T00:00:00.000Z",
    });
    const plan = planDreamCycle(input([remark], { changedSince: "2026-02-27T00:00:00.000Z" }));
    expect(plan.counts).toMatchObject({ decayed: 1, demoted: 1 });
    expect(plan.writes[0]?.state).toBe("demoted");
  });

  it("consolidates, promotes dimensions and proposes artifacts, marking sources as proposed", () => {
    const rule = knowledgeObject({
      id: "rule",
      type: "constraint",
      statement: "Never deploy on Fridays",
      confidence: 0.85,
      reinforcementCount: 3,
      sessionIds: ["s1", "s2", "s3"],
      lastReinforcedAt: "2026-02-28T00:00:00.000Z",
    });
    const plan = planDreamCycle(
      input([rule], {
        candidateDimensions: [
          { name: "garden_zone", occurrences: 4, meanConfidence: 0.8, values: ["north"] },
        ],
      }),
    );
    expect(plan.counts).toMatchObject({ principlesCreated: 1, dimensionsPromoted: 1, proposalsGenerated: 2 });
    expect(plan.proposals.map((p) => p.artifactPath)).toEqual([
      "artifacts/users/alice/constraints.md",
      "artifacts/users/alice/principles.md",
    ]);
    const byId = new Map(plan.writes.map((o) => [o.id, o]));
    expect(byId.get("rule")?.promotion).toBe("proposed");
    expect(byId.get("rule")?.links).toEqual([expect.objectContaining({ relation: "evidenceFor" })]);
  });

  it("is idempotent: planning again over its own writes changes nothing more", () => {
    const rule = knowledgeObject({
      id: "rule",
      type: "constraint",
      confidence: 0.85,
      reinforcementCount: 3,
      sessionIds: ["s1", "s2", "s3"],
      lastReinforcedAt: "2026-02-28T00:00:00.000Z",
    });
    const first = planDreamCycle(input([rule]));
    const proposals = new Map(first.proposals.map((p) => [p.artifactPath, p.content]));
    const second = planDreamCycle(input(first.writes, { changedSince: now, artifacts: proposals }));
    expect(second.writes).toEqual([]);
    expect(second.proposals).toEqual([]);
  });

  it("credits survival once per change: a full cycle re-examines every pair but rewards only changed objects", () => {
    const settled = knowledgeObject({
      id: "settled",
      updatedAt: "2026-02-20T00:00:00.000Z",
      lastReinforcedAt: "2026-02-27T00:00:00.000Z",
    });
    const fresh = knowledgeObject({
      id: "fresh",
      updatedAt: "2026-02-28T00:00:00.000Z",
      lastReinforcedAt: "2026-02-28T00:00:00.000Z",
    });
    const plan = planDreamCycle(
      input([settled, fresh], { changedSince: "2026-02-27T00:00:00.000Z", compareAll: true }),
    );
    expect(plan.counts).toMatchObject({ changedObjects: 1, survived: 1 });
    expect(plan.writes.map((o) => o.id)).toEqual(["fresh"]);
  });

  it("compares pairs of unchanged objects only in a full cycle", () => {
    const older = knowledgeObject({
      id: "a",
      type: "preference",
      statement: "Alice likes jazz",
      lastReinforcedAt: "2026-02-01T00:00:00.000Z",
      updatedAt: "2026-02-01T00:00:00.000Z",
    });
    const newer = knowledgeObject({
      id: "b",
      type: "preference",
      statement: "Alice does not like jazz",
      lastReinforcedAt: "2026-02-10T00:00:00.000Z",
      updatedAt: "2026-02-10T00:00:00.000Z",
    });
    const pairs = [{ aId: "a", bId: "b", similarity: 0.9 }];
    const since = "2026-02-27T00:00:00.000Z";
    expect(planDreamCycle(input([older, newer], { pairs, changedSince: since })).counts).toMatchObject({
      contradictionsDetected: 0,
    });
    const full = planDreamCycle(input([older, newer], { pairs, changedSince: since, compareAll: true }));
    expect(full.counts).toMatchObject({ contradictionsDetected: 1, invalidated: 1 });
    // A pair the graph found only now was never examined: an incremental cycle takes it too.
    const fresh = [{ aId: "a", bId: "b", similarity: 0.9, fresh: true }];
    const found = planDreamCycle(input([older, newer], { pairs: fresh, changedSince: since }));
    expect(found.counts).toMatchObject({ contradictionsDetected: 1, invalidated: 1 });
  });

  it("reports every count, full or incremental, with the shell's graph and write counts", () => {
    const graph = { built: 5, pending: 2, vectorsBackfilled: 1 };
    const plan = planDreamCycle(input([], { neighbourGraph: graph }));
    expect(Object.keys(plan.counts).sort()).toEqual([...dreamCountNames].sort());
    expect(plan.counts).toMatchObject({
      neighbourListsBuilt: 5,
      neighbourListsPending: 2,
      vectorsBackfilled: 1,
    });
    const applied = { writeConflicts: 3 };
    expect(dreamReport(input([]), plan, now, applied)).toMatchObject({
      mode: "full",
      cycleId: "c1",
      counts: { writeConflicts: 3 },
    });
    expect(dreamReport(input([], { changedSince: now }), plan, now, applied).mode).toBe("incremental");
    expect(dreamReport(input([], { changedSince: now, compareAll: true }), plan, now, applied).mode).toBe(
      "full",
    );
  });

  it("merges near-duplicates after contradictions, counts them and invalidates the merged one", () => {
    const first = knowledgeObject({
      id: "a",
      statement: "The spare key is under the blue pot",
      confidence: 0.7,
    });
    const second = knowledgeObject({
      id: "b",
      statement: "The spare key is under the blue pot",
      sessionIds: ["s2"],
    });
    const plan = planDreamCycle(input([first, second]));
    expect(plan.counts).toMatchObject({ duplicatesMerged: 1, invalidated: 1 });
    expect(plan.merges).toEqual([{ survivorId: "a", mergedIds: ["b"] }]);
    const byId = new Map(plan.writes.map((o) => [o.id, o]));
    expect(byId.get("a")?.sessionIds).toEqual(["s1", "s2"]);
    expect(byId.get("b")?.state).toBe("invalidated");
    expect(dreamReport(input([first, second]), plan, now, { writeConflicts: 0 }).merges).toEqual(plan.merges);
  });

  it("asks for a wording between its stages and defers a principle that got none", () => {
    const rule = knowledgeObject({
      id: "rule",
      type: "constraint",
      statement: "Never deploy on Fridays",
      confidence: 0.85,
      reinforcementCount: 3,
      sessionIds: ["s1", "s2", "s3"],
      lastReinforcedAt: "2026-02-28T00:00:00.000Z",
    });
    const options = {
      ...defaultDreamOptions,
      principles: { ...defaultDreamOptions.principles, requireWording: true },
    };
    const stage = beginDreamCycle(input([rule]), options);
    expect(stage.drafts).toEqual([
      {
        id: expect.stringMatching(/^principle-/),
        types: ["constraint"],
        statements: ["Never deploy on Fridays"],
      },
    ]);
    const id = stage.drafts[0]?.id as string;
    const deferred = finishDreamCycle(stage, new Map(), new Map([[id, "reflection model unavailable"]]));
    expect(deferred.counts).toMatchObject({ principlesCreated: 0, principlesDeferred: 1 });
    expect(deferred.deferredPrinciples).toEqual([
      { principleId: id, reason: "reflection model unavailable" },
    ]);
    expect(deferred.writes.filter((o) => o.type === "principle")).toEqual([]);
    // The same stage finished again with a wording (the stage is not consumed).
    const worded = finishDreamCycle(stage, new Map([[id, "Deploys never happen on Fridays"]]));
    expect(worded.counts).toMatchObject({ principlesCreated: 1, principlesDeferred: 0 });
    expect(worded.writes.find((o) => o.id === id)?.statement).toBe("Deploys never happen on Fridays");
  });
});
