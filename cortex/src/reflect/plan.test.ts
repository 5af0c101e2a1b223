import { type ReflectionDelta, reflectionDeltaSchema } from "@remram/contract";
import { describe, expect, it } from "vitest";
import type { MaturingObject } from "../core/knowledge.js";
import type { Neighbour } from "../core/match.js";
import { knowledgeObject } from "../testing/fixtures.js";
import { planReflection, type ReflectionContext, redactDelta } from "./plan.js";

const now = "2026-03-01T12:00:00.000Z";
const alice = { kind: "user" as const, ownerIds: ["alice"] };

function context(overrides: Partial<ReflectionContext> = {}): ReflectionContext {
  let next = 0;
  return {
    principal: { userId: "alice", householdId: "h1", agentId: "main" },
    now,
    allowedScopes: ["user", "household", "shared"],
    itemNeighbours: [],
    correctionNeighbours: [],
    targets: new Map(),
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

const teaItem = {
  type: "preference",
  statement: "Alice prefers tea",
  claim: { subject: "alice", predicate: "prefers drink", object: "tea" },
  scope: alice,
  sourceTurnIds: ["t9"],
};

describe("planReflection", () => {
  it("creates a new object with initial confidence, provenance and one assertion", () => {
    const plan = planned(delta({ items: [teaItem] }), context());
    expect(plan.created).toEqual([
      expect.objectContaining({
        id: "new-1",
        type: "preference",
        confidence: 0.5,
        reinforcementCount: 1,
        sessionIds: ["s2"],
        sourceTurnIds: ["t9"],
        validFrom: now,
        state: "active",
      }),
    ]);
    expect(plan.updated).toEqual([]);
  });

  it("reinforces the stored object instead of duplicating it, counting the new session", () => {
    const stored = knowledgeObject({
      id: "k1",
      type: "preference",
      claim: teaItem.claim,
      sessionIds: ["s1"],
    });
    const plan = planned(delta({ items: [teaItem] }), context({ itemNeighbours: [[{ object: stored }]] }));
    expect(plan.created).toEqual([]);
    expect(plan.outcome.reinforced).toEqual(["k1"]);
    const [updated] = plan.updated;
    expect(updated).toMatchObject({ reinforcementCount: 2, sessionIds: ["s1", "s2"], lastReinforcedAt: now });
    expect(updated?.confidence).toBeGreaterThan(stored.confidence);
    expect(updated?.sourceTurnIds).toEqual(["t1", "t9"]);
  });

  it("reinforces once per assertion even when a delta repeats an item", () => {
    const plan = planned(delta({ items: [teaItem, teaItem] }), context());
    expect(plan.created).toHaveLength(1);
    expect(plan.created[0]?.reinforcementCount).toBe(2);
    expect(plan.outcome.reinforced).toEqual(["new-1"]);
  });

  it("links a new object to related neighbours in both directions", () => {
    const near = knowledgeObject({ id: "k1", type: "preference" });
    const plan = planned(
      delta({ items: [teaItem] }),
      context({ itemNeighbours: [[{ object: near, similarity: 0.8 }]] }),
    );
    expect(plan.created[0]?.links).toEqual([{ relation: "related", targetId: "k1" }]);
    expect(plan.updated[0]?.links).toEqual([{ relation: "related", targetId: "new-1" }]);
    expect(plan.outcome.linksAdded).toBe(2);
  });

  it("stays additive on a conflicting claim: both stay valid, linked as conflicting for dream", () => {
    const coffee = knowledgeObject({
      id: "k1",
      type: "preference",
      claim: { subject: "alice", predicate: "prefers drink", object: "coffee" },
    });
    const plan = planned(delta({ items: [teaItem] }), context({ itemNeighbours: [[{ object: coffee }]] }));
    expect(plan.created[0]?.links).toEqual([{ relation: "conflicts", targetId: "k1" }]);
    expect(plan.updated[0]).toMatchObject({
      state: "active",
      links: [{ relation: "conflicts", targetId: "new-1" }],
    });
  });

  it("invalidates a corrected object (validity ends, never deleted) and links its replacement", () => {
    const bergen = knowledgeObject({
      id: "k1",
      claim: { subject: "alice", predicate: "lives in", object: "Bergen" },
      confidence: 0.8,
    });
    const plan = planned(
      delta({
        corrections: [
          {
            claim: { subject: "alice", predicate: "lives in" },
            statement: "I don't live in Bergen any more",
            scope: alice,
            sourceTurnIds: ["t3"],
            replacement: {
              type: "fact",
              statement: "Alice lives in Oslo",
              claim: { subject: "alice", predicate: "lives in", object: "Oslo" },
              scope: alice,
              sourceTurnIds: ["t3"],
            },
          },
        ],
      }),
      context({ correctionNeighbours: [[{ object: bergen }]] }),
    );
    expect(plan.outcome.invalidated).toEqual(["k1"]);
    expect(plan.updated[0]).toMatchObject({
      id: "k1",
      state: "invalidated",
      invalidAt: now,
      confidence: 0.4,
    });
    expect(plan.updated[0]?.links).toEqual([{ relation: "supersededBy", targetId: "new-1" }]);
    expect(plan.created[0]).toMatchObject({
      statement: "Alice lives in Oslo",
      links: [{ relation: "supersedes", targetId: "k1" }],
    });
  });

  it("reports a correction that matched nothing and invalidates nothing", () => {
    const plan = planned(
      delta({ corrections: [{ statement: "forget that", scope: alice, sourceTurnIds: ["t1"] }] }),
      context({ correctionNeighbours: [[{ object: knowledgeObject({ id: "k1" }), similarity: 0.3 }]] }),
    );
    expect(plan.outcome.unmatchedCorrections).toEqual([0]);
    expect(plan.updated).toEqual([]);
  });

  it("applies a bounded explicit confidence adjustment to a named target", () => {
    const target = knowledgeObject({ id: "k1", confidence: 0.5 });
    const plan = planned(
      delta({
        confidenceAdjustments: [{ targetId: "k1", delta: 0.6, reason: "confirmed", sourceTurnIds: ["t"] }],
      }),
      context({ targets: new Map<string, MaturingObject>([["k1", target]]) }),
    );
    expect(plan.updated[0]?.confidence).toBeCloseTo(0.7, 10);
  });

  it("lets the model's own confidence move a new object's start only within the bound", () => {
    const plan = planned(delta({ items: [{ ...teaItem, confidence: 1 }] }), context());
    expect(plan.created[0]?.confidence).toBeCloseTo(0.7, 10);
  });

  it("starts a tool-confirmed object higher than a merely stated one", () => {
    const plan = planned(delta({ items: [{ ...teaItem, toolConfirmed: true }] }), context());
    expect(plan.created[0]?.confidence).toBeGreaterThan(0.5);
    expect(plan.created[0]?.toolConfirmations).toBe(1);
  });

  it("rejects the whole delta when one item writes outside the principal's scope, writing nothing", () => {
    const plan = planReflection(
      delta({ items: [teaItem, { ...teaItem, scope: { kind: "user", ownerIds: ["bob"] } }] }),
      context(),
    );
    expect(plan).toEqual({ ok: false, violations: [expect.objectContaining({ path: "items.1.scope" })] });
  });

  it("passes candidate dimensions through for the store to count", () => {
    const plan = planned(
      delta({ candidateDimensions: [{ name: "garden_zone", value: "north bed", sourceTurnIds: ["t1"] }] }),
      context(),
    );
    expect(plan.outcome.candidateDimensions).toEqual([
      { name: "garden_zone", value: "north bed", sourceTurnIds: ["t1"] },
    ]);
  });

  it("is deterministic: the same delta and context give the same plan", () => {
    const neighbours: Neighbour[] = [
      { object: knowledgeObject({ id: "k1", type: "preference" }), similarity: 0.8 },
    ];
    const a = planReflection(delta({ items: [teaItem] }), context({ itemNeighbours: [neighbours] }));
    const b = planReflection(delta({ items: [teaItem] }), context({ itemNeighbours: [neighbours] }));
    expect(a).toEqual(b);
  });
});

describe("reflection delta schema", () => {
  it("refuses a principle: only dream creates principles", () => {
    const result = reflectionDeltaSchema.safeParse({
      sessionId: "s",
      items: [{ type: "principle", statement: "x", scope: alice, sourceTurnIds: ["t"] }],
    });
    expect(result.success).toBe(false);
    expect(result.error?.issues[0]?.path).toEqual(["items", 0, "type"]);
  });

  it("requires source turn ids on every item", () => {
    const result = reflectionDeltaSchema.safeParse({
      sessionId: "s",
      items: [{ type: "fact", statement: "x", scope: alice, sourceTurnIds: [] }],
    });
    expect(result.error?.issues[0]?.path).toEqual(["items", 0, "sourceTurnIds"]);
  });

  it("redacts a delta before anything matches or stores it: credentials everywhere, contacts outside user scope", () => {
    const household = { kind: "household" as const, ownerIds: ["h1"] };
    const clean = redactDelta(
      delta({
        items: [
          { ...teaItem, statement: "Alice's gym login password is Lift2024!", claim: undefined },
          { ...teaItem, statement: "Alice's GP: dr.meyer@example.com", claim: undefined },
          { ...teaItem, statement: "The plumber is on 0170 1234567", scope: household, claim: undefined },
        ],
        corrections: [
          {
            statement: "card 4111 1111 1111 1111 is old",
            scope: alice,
            sourceTurnIds: ["t1"],
            replacement: {
              ...teaItem,
              claim: { subject: "alice", predicate: "card", object: "5555555555554444" },
            },
          },
        ],
        candidateDimensions: [{ name: "wifi", value: "password: s3cret!", sourceTurnIds: ["t1"] }],
      }),
      "household",
    );
    expect(clean.items.map((item) => [item.statement, item.privacy])).toEqual([
      ["Alice's gym login password is <PASSWORD>", undefined],
      ["Alice's GP: dr.meyer@example.com", "private"],
      ["The plumber is on <PHONE>", undefined],
    ]);
    expect(clean.corrections[0]?.statement).toBe("card <CARD_NUMBER> is old");
    expect(clean.corrections[0]?.replacement?.claim?.object).toBe("<CARD_NUMBER>");
    expect(clean.candidateDimensions[0]?.value).toBe("password: <REDACTED>");
  });

  it("redacts item dimension values, contact details too in a user's own item, replacements included", () => {
    const dimensions = {
      person: ["plumber", "+49 170 1234567"],
      topic: ["token ghp_abcdefghijklmnopqrstuvwxyz0123"],
    };
    const clean = redactDelta(
      delta({
        items: [{ ...teaItem, dimensions }],
        corrections: [
          { statement: "old", scope: alice, sourceTurnIds: ["t1"], replacement: { ...teaItem, dimensions } },
        ],
      }),
      "household",
    );
    const expected = { person: ["plumber", "<PHONE>"], topic: ["token <TOKEN>"] };
    expect(clean.items[0]?.dimensions).toEqual(expected);
    expect(clean.corrections[0]?.replacement?.dimensions).toEqual(expected);
    // Replaced, not kept: the item's privacy is not raised for a value that is gone.
    expect(clean.items[0]?.privacy).toBeUndefined();
  });
});
