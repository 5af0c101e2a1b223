import { type ReflectionDelta, reflectionDeltaSchema, reflectRequest } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { applyConfidenceEvent, defaultConfidenceConstants } from "../core/confidence.js";
import type { MaturingObject } from "../core/knowledge.js";
import { knowledgeObject } from "../testing/fixtures.js";
import { planReflection, type ReflectionContext } from "./plan.js";
import { findScopeViolations } from "./scope.js";

// The parts of a reflection delta beyond items and corrections: confidence adjustments by effect and the delta's
// own links between objects (seed 000 §4.6, §5.6: "adjusts confidence, and links related objects").

const now = "2026-03-01T12:00:00.000Z";
const alice = { kind: "user" as const, ownerIds: ["alice"] };
const household = { kind: "household" as const, ownerIds: ["h1"] };
const principal = { userId: "alice", householdId: "h1", agentId: "main" };

function context(targets: MaturingObject[], overrides: Partial<ReflectionContext> = {}): ReflectionContext {
  let next = 0;
  return {
    principal,
    now,
    allowedScopes: ["user", "household", "shared"],
    itemNeighbours: [],
    correctionNeighbours: [],
    targets: new Map(targets.map((t) => [t.id, t])),
    newId: () => `new-${++next}`,
    ...overrides,
  };
}

function delta(input: Record<string, unknown>): ReflectionDelta {
  return reflectionDeltaSchema.parse({ sessionId: "s2", ...input });
}

function planned(d: ReflectionDelta, ctx: ReflectionContext) {
  const plan = planReflection(d, ctx);
  if (!plan.ok) throw new Error(`unexpected violations ${JSON.stringify(plan.violations)}`);
  return plan;
}

const adjust = (targetId: string, effect: string) => ({
  targetId,
  effect,
  reason: `the user ${effect}d it`,
  sourceTurnIds: ["t5"],
});

const item = (statement: string, scope: typeof alice | typeof household = alice) => ({
  type: "fact",
  statement,
  scope,
  sourceTurnIds: ["t5"],
});

describe("confidence adjustments by effect, through the confidence rules", () => {
  const target = knowledgeObject({ id: "k1", confidence: 0.6, sessionIds: ["s1"] });

  it("reinforce counts as an assertion from this session: reinforcement with the cross-session gain", () => {
    const plan = planned(delta({ confidenceAdjustments: [adjust("k1", "reinforce")] }), context([target]));
    const [updated] = plan.updated;
    expect(updated?.confidence).toBeCloseTo(
      applyConfidenceEvent(0.6, { kind: "reinforcement", newSession: true }),
      10,
    );
    expect(updated).toMatchObject({
      reinforcementCount: 2,
      sessionIds: ["s1", "s2"],
      sourceTurnIds: ["t1", "t5"],
      lastReinforcedAt: now,
    });
    expect(plan.outcome.adjusted).toEqual(["k1"]);
  });

  it("reinforce from a session that asserted it before gains less, and revives a demoted object", () => {
    const demoted = knowledgeObject({ id: "k1", confidence: 0.6, sessionIds: ["s2"], state: "demoted" });
    const plan = planned(delta({ confidenceAdjustments: [adjust("k1", "reinforce")] }), context([demoted]));
    expect(plan.updated[0]?.confidence).toBeCloseTo(
      applyConfidenceEvent(0.6, { kind: "reinforcement", newSession: false }),
      10,
    );
    expect(plan.updated[0]?.state).toBe("active");
  });

  it("weaken takes the largest explicit step down and nothing else", () => {
    const plan = planned(delta({ confidenceAdjustments: [adjust("k1", "weaken")] }), context([target]));
    expect(plan.updated[0]?.confidence).toBeCloseTo(
      0.6 - defaultConfidenceConstants.maxExplicitAdjustment,
      10,
    );
    expect(plan.updated[0]).toMatchObject({ reinforcementCount: 1, state: "active", updatedAt: now });
  });

  it("contradict halves it and leaves it valid: reflection is additive, dream or a correction ends validity", () => {
    const plan = planned(delta({ confidenceAdjustments: [adjust("k1", "contradict")] }), context([target]));
    expect(plan.updated[0]?.confidence).toBeCloseTo(0.3, 10);
    expect(plan.updated[0]?.state).toBe("active");
    expect(plan.updated[0]?.invalidAt).toBeUndefined();
  });

  it("leaves an invalidated object alone: no adjustment revives what a correction ended", () => {
    const ended = knowledgeObject({ id: "k1", state: "invalidated", invalidAt: "2026-02-01T00:00:00.000Z" });
    const plan = planned(delta({ confidenceAdjustments: [adjust("k1", "reinforce")] }), context([ended]));
    expect(plan.updated).toEqual([]);
    expect(plan.outcome.adjusted).toEqual([]);
  });

  it("applies two adjustments of one object in order, listing it once", () => {
    const plan = planned(
      delta({ confidenceAdjustments: [adjust("k1", "weaken"), adjust("k1", "weaken")] }),
      context([target]),
    );
    expect(plan.updated[0]?.confidence).toBeCloseTo(0.2, 10);
    expect(plan.outcome.adjusted).toEqual(["k1"]);
  });

  it("refuses an adjustment naming both an effect and a raw delta, or neither", () => {
    const both = { ...adjust("k1", "weaken"), delta: 0.1 };
    const { effect: _effect, ...neither } = adjust("k1", "weaken");
    for (const adjustment of [both, neither]) {
      const result = reflectionDeltaSchema.safeParse({ sessionId: "s", confidenceAdjustments: [adjustment] });
      expect(result.error?.issues[0]?.message).toBe("give exactly one of effect and delta");
    }
  });
});

describe("the delta's links", () => {
  const stored = knowledgeObject({
    id: "k1",
    statement: "The household recycles on Tuesdays",
    scope: household,
  });

  it("links a new item to a stored object both ways, in the knowledge model's relations", () => {
    const cases = [
      ["supports", "evidenceFor", "evidence"],
      ["contradicts", "conflicts", "conflicts"],
      ["refines", "refines", "refinedBy"],
      ["related", "related", "related"],
    ] as const;
    for (const [relation, forward, reverse] of cases) {
      const plan = planned(
        delta({
          items: [item("Glass goes out on Tuesdays too", household)],
          links: [{ from: { item: 0 }, relation, to: { id: "k1" }, sourceTurnIds: ["t5"] }],
        }),
        context([stored]),
      );
      expect(plan.created[0]?.links, relation).toEqual([{ relation: forward, targetId: "k1" }]);
      expect(plan.updated[0]?.links, relation).toEqual([{ relation: reverse, targetId: "new-1" }]);
      expect(plan.outcome.linksAdded).toBe(2);
    }
  });

  it("links two items of the same delta, and a correction's replacement, by position", () => {
    const plan = planned(
      delta({
        items: [item("Alice runs on Mondays"), item("Alice runs 5 km")],
        corrections: [
          {
            statement: "Alice does not swim",
            scope: alice,
            sourceTurnIds: ["t5"],
            replacement: item("Alice cycles instead of swimming"),
          },
        ],
        links: [
          { from: { item: 1 }, relation: "refines", to: { item: 0 }, sourceTurnIds: ["t5"] },
          { from: { replacement: 0 }, relation: "related", to: { item: 0 }, sourceTurnIds: ["t5"] },
        ],
      }),
      context([]),
    );
    // The correction's replacement is planned first (new-1), then the items (new-2, new-3).
    const byStatement = new Map(plan.created.map((o) => [o.statement, o]));
    expect(byStatement.get("Alice runs 5 km")?.links).toEqual([{ relation: "refines", targetId: "new-2" }]);
    expect(byStatement.get("Alice runs on Mondays")?.links).toEqual([
      { relation: "refinedBy", targetId: "new-3" },
      { relation: "related", targetId: "new-1" },
    ]);
    expect(plan.outcome.linksAdded).toBe(4);
  });

  it("links the object an item reinforced, not a copy of it", () => {
    const tea = knowledgeObject({
      id: "k2",
      claim: { subject: "alice", predicate: "drinks", object: "tea" },
    });
    const plan = planned(
      delta({
        items: [{ ...item("Alice drinks tea"), claim: tea.claim }],
        links: [{ from: { item: 0 }, relation: "related", to: { id: "k3" }, sourceTurnIds: ["t5"] }],
      }),
      context([knowledgeObject({ id: "k3" })], { itemNeighbours: [[{ object: tea }]] }),
    );
    expect(plan.created).toEqual([]);
    expect(plan.updated.find((o) => o.id === "k2")?.links).toEqual([{ relation: "related", targetId: "k3" }]);
  });

  it("drops a link across scopes and a link of an object to itself, counting them, writing nothing for them", () => {
    const own = knowledgeObject({ id: "k2" });
    const plan = planned(
      delta({
        links: [
          { from: { id: "k2" }, relation: "related", to: { id: "k1" }, sourceTurnIds: ["t5"] },
          { from: { id: "k2" }, relation: "related", to: { id: "k2" }, sourceTurnIds: ["t5"] },
        ],
      }),
      context([stored, own]),
    );
    expect(plan.updated).toEqual([]);
    expect(plan.outcome).toMatchObject({ linksAdded: 0, linksDropped: 2 });
  });

  it("adds an existing link once: a retried link is no new link", () => {
    const linked = knowledgeObject({ id: "k2", links: [{ relation: "related", targetId: "k4" }] });
    const other = knowledgeObject({ id: "k4", links: [{ relation: "related", targetId: "k2" }] });
    const plan = planned(
      delta({ links: [{ from: { id: "k2" }, relation: "related", to: { id: "k4" }, sourceTurnIds: ["t"] }] }),
      context([linked, other]),
    );
    expect(plan.updated).toEqual([]);
    expect(plan.outcome.linksAdded).toBe(0);
  });

  it("refuses the whole delta when a link names an id outside the principal's scope, the same as a missing one", () => {
    const bobs = knowledgeObject({ id: "bobs", scope: { kind: "user", ownerIds: ["bob"] } });
    const shared = knowledgeObject({ id: "shared1", scope: { kind: "shared", ownerIds: [] } });
    const d = delta({
      items: [item("Alice likes boats")],
      links: [
        { from: { item: 0 }, relation: "related", to: { id: "bobs" }, sourceTurnIds: ["t"] },
        { from: { id: "shared1" }, relation: "supports", to: { item: 0 }, sourceTurnIds: ["t"] },
        { from: { item: 0 }, relation: "related", to: { id: "missing" }, sourceTurnIds: ["t"] },
      ],
    });
    const plan = planReflection(d, context([bobs, shared]));
    expect(plan.ok).toBe(false);
    const violations = findScopeViolations(
      d,
      principal,
      new Map([
        ["bobs", bobs],
        ["shared1", shared],
      ]),
      ["user", "household", "shared"],
    );
    expect(violations.map((v) => v.path)).toEqual(["links.0.to.id", "links.1.from.id", "links.2.to.id"]);
    expect(violations[0]?.reason.replace("bobs", "X")).toBe(violations[2]?.reason.replace("missing", "X"));
  });

  it("refuses, as bad input, a link to an item or replacement the delta does not have", () => {
    const result = reflectRequest.safeParse({
      principal,
      sessionId: "s",
      items: [item("Alice likes boats")],
      corrections: [{ statement: "no", scope: alice, sourceTurnIds: ["t"] }],
      links: [
        { from: { item: 1 }, relation: "related", to: { item: 0 }, sourceTurnIds: ["t"] },
        { from: { item: 0 }, relation: "related", to: { replacement: 0 }, sourceTurnIds: ["t"] },
      ],
    });
    expect(result.error?.issues.map((issue) => [issue.path.join("."), issue.message])).toEqual([
      ["links.0.from", "no items.1 in this delta"],
      ["links.1.to", "corrections.0 has no replacement in this delta"],
    ]);
  });

  it("runs links after adjustments and items, so one delta can add an item, reinforce a target and link both", () => {
    const plan = planned(
      delta({
        items: [item("Glass goes out on Tuesdays too", household)],
        confidenceAdjustments: [adjust("k1", "reinforce")],
        links: [{ from: { item: 0 }, relation: "refines", to: { id: "k1" }, sourceTurnIds: ["t5"] }],
      }),
      context([stored]),
    );
    expect(plan.updated[0]).toMatchObject({
      id: "k1",
      reinforcementCount: 2,
      links: [{ relation: "refinedBy", targetId: "new-1" }],
    });
    expect(plan.updated[0]?.confidence).toBeGreaterThan(stored.confidence);
  });
});
