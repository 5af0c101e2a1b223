import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { knowledgeObject } from "../testing/fixtures.js";
import { detectContradictions, resolveContradiction, reviewItemId } from "./contradictions.js";

const claim = (object: string) => ({ subject: "alice", predicate: "prefers drink", object });

describe("contradiction detection", () => {
  const tea = knowledgeObject({ id: "k1", type: "preference", claim: claim("tea") });
  const coffee = knowledgeObject({ id: "k2", type: "preference", claim: claim("coffee") });

  it("finds same subject and predicate with conflicting objects", () => {
    expect(detectContradictions([tea, coffee], [], undefined)).toEqual([
      { kind: "claim", ids: ["k1", "k2"] },
    ]);
  });

  it("ignores pairs in different scopes and invalidated objects", () => {
    const bobs = { ...coffee, scope: { kind: "user" as const, ownerIds: ["bob"] } };
    const gone = { ...coffee, id: "k3", state: "invalidated" as const, invalidAt: "2026-01-02T00:00:00Z" };
    expect(detectContradictions([tea, bobs, gone], [], undefined)).toEqual([]);
  });

  it("finds semantic opposites only among near neighbours of one type and scope", () => {
    const likes = knowledgeObject({ id: "a", statement: "Alice likes jazz" });
    const dislikes = knowledgeObject({ id: "b", statement: "Alice does not like jazz" });
    expect(
      detectContradictions([likes, dislikes], [{ aId: "a", bId: "b", similarity: 0.85 }], undefined),
    ).toEqual([{ kind: "opposite", ids: ["a", "b"] }]);
    expect(
      detectContradictions([likes, dislikes], [{ aId: "a", bId: "b", similarity: 0.79 }], undefined),
    ).toEqual([]);
  });

  it("finds claims about the same subject and object whose predicates say the opposite", () => {
    const spo = (id: string, predicate: string) =>
      knowledgeObject({ id, claim: { subject: "Alice", predicate, object: "jazz" } });
    expect(detectContradictions([spo("a", "likes"), spo("b", "does not like")], [], undefined)).toEqual([
      { kind: "claim", ids: ["a", "b"] },
    ]);
    expect(detectContradictions([spo("a", "likes"), spo("b", "dislikes")], [], undefined)).toHaveLength(1);
    expect(detectContradictions([spo("a", "likes"), spo("b", "plays")], [], undefined)).toEqual([]);
  });

  it("lets a multi-valued predicate hold several objects", () => {
    const likes = (id: string, object: string) =>
      knowledgeObject({ id, claim: { subject: "alice", predicate: "Likes", object } });
    expect(detectContradictions([likes("a", "jazz"), likes("b", "blues")], [], undefined)).toEqual([]);
  });

  it("reports only pairs touching an object changed since the last cycle when incremental", () => {
    const old = { ...tea, updatedAt: "2026-01-01T00:00:00.000Z" };
    const older = { ...coffee, updatedAt: "2026-01-01T00:00:00.000Z" };
    expect(detectContradictions([old, older], [], "2026-02-01T00:00:00.000Z")).toEqual([]);
    const fresh = { ...coffee, updatedAt: "2026-02-02T00:00:00.000Z" };
    expect(detectContradictions([old, fresh], [], "2026-02-01T00:00:00.000Z")).toHaveLength(1);
  });
});

describe("resolution by evidence", () => {
  const older = knowledgeObject({ id: "old", confidence: 0.6, lastReinforcedAt: "2026-01-01T00:00:00.000Z" });
  const newer = knowledgeObject({ id: "new", confidence: 0.5, lastReinforcedAt: "2026-02-01T00:00:00.000Z" });

  it("lets the newer side win when it is within the margin of the older one's confidence", () => {
    expect(resolveContradiction(older, newer)).toMatchObject({
      outcome: "resolved",
      winnerId: "new",
      loserId: "old",
    });
  });

  it("sends a weak new claim against a well-established old one to review", () => {
    expect(resolveContradiction({ ...older, confidence: 0.9 }, newer)).toMatchObject({ outcome: "review" });
  });

  it("sends a tie in time to review", () => {
    expect(resolveContradiction(older, { ...newer, lastReinforcedAt: older.lastReinforcedAt })).toMatchObject(
      {
        outcome: "review",
      },
    );
  });

  it("never overturns an object already promoted into an artifact on its own", () => {
    expect(resolveContradiction({ ...older, promotion: "promoted" }, newer)).toMatchObject({
      outcome: "review",
    });
  });

  it("reads newer as last asserted, so re-asserting an old claim makes it the newer one", () => {
    const reasserted = { ...older, lastReinforcedAt: "2026-03-01T00:00:00.000Z" };
    expect(resolveContradiction(reasserted, newer)).toMatchObject({ winnerId: "old", loserId: "new" });
  });

  it("does not depend on argument order", () => {
    const object = (id: string) =>
      fc
        .record({
          confidence: fc.double({ min: 0, max: 1, noNaN: true }),
          day: fc.integer({ min: 1, max: 28 }),
        })
        .map(({ confidence, day }) =>
          knowledgeObject({
            id,
            confidence,
            lastReinforcedAt: `2026-01-${String(day).padStart(2, "0")}T00:00:00.000Z`,
          }),
        );
    fc.assert(
      fc.property(object("a"), object("b"), (a, b) => {
        expect(resolveContradiction(a, b)).toEqual(resolveContradiction(b, a));
      }),
    );
  });

  it("gives one review id for a pair however it is ordered", () => {
    expect(reviewItemId(["a", "b"])).toBe(reviewItemId(["b", "a"]));
    expect(reviewItemId(["a", "b"])).not.toBe(reviewItemId(["a", "c"]));
  });
});
