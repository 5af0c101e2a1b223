import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { knowledgeObject } from "../testing/fixtures.js";
import { compareClaims, findCorrectionTargets, matchDeltaItem } from "./match.js";

const alice = { kind: "user" as const, ownerIds: ["alice"] };
const coffee = { subject: "Alice", predicate: "prefers drink", object: "coffee" };
const tea = { subject: "alice", predicate: "Prefers  drink", object: "tea" };

describe("claim comparison", () => {
  it("treats claims that differ only in case and whitespace as the same", () => {
    expect(
      compareClaims(coffee, { subject: " alice ", predicate: "prefers   drink", object: "Coffee" }),
    ).toBe("same");
  });

  it("sees another object under the same subject and predicate as a conflict", () => {
    expect(compareClaims(coffee, tea)).toBe("conflicting");
  });

  it("does not see a conflict for a predicate declared multi-valued", () => {
    expect(compareClaims(coffee, tea, ["prefers drink"])).toBe("unrelated");
  });

  it("is symmetric", () => {
    const part = fc.constantFrom("a", "A", "b", " b ");
    const claim = fc.record({ subject: part, predicate: part, object: part });
    fc.assert(fc.property(claim, claim, (a, b) => compareClaims(a, b) === compareClaims(b, a)));
  });
});

describe("reflect-delta matching", () => {
  it("reinforces an object with the same claim even when the embeddings are far apart", () => {
    const stored = knowledgeObject({ id: "k1", type: "preference", claim: coffee });
    const match = matchDeltaItem(
      { type: "preference", statement: "a new statement", claim: coffee, scope: alice },
      [{ object: stored, similarity: 0.2 }],
    );
    expect(match).toEqual({ action: "reinforce", target: stored, by: "claim" });
  });

  it("reinforces a near-duplicate statement by cosine similarity at the threshold", () => {
    const stored = knowledgeObject({ id: "k1" });
    const match = matchDeltaItem({ type: "fact", statement: "a new statement", scope: alice }, [
      { object: stored, similarity: 0.9 },
    ]);
    expect(match).toMatchObject({ action: "reinforce", by: "semantic" });
  });

  it("creates a new object just below the duplicate threshold and links it as related", () => {
    const stored = knowledgeObject({ id: "k1" });
    const match = matchDeltaItem({ type: "fact", statement: "a new statement", scope: alice }, [
      { object: stored, similarity: 0.8999 },
    ]);
    expect(match).toEqual({ action: "create", relatedIds: ["k1"], conflictingIds: [] });
  });

  it("never reinforces across types or scopes", () => {
    const otherType = knowledgeObject({ id: "k1", type: "decision" });
    const otherScope = knowledgeObject({ id: "k2", scope: { kind: "user", ownerIds: ["bob"] } });
    const match = matchDeltaItem({ type: "fact", statement: "a new statement", scope: alice }, [
      { object: otherType, similarity: 0.99 },
      { object: otherScope, similarity: 0.99 },
    ]);
    expect(match).toEqual({ action: "create", relatedIds: ["k1"], conflictingIds: [] });
  });

  it("marks a conflicting claim instead of reinforcing it, however similar the text", () => {
    const stored = knowledgeObject({ id: "k1", type: "preference", claim: tea });
    const match = matchDeltaItem(
      { type: "preference", statement: "a new statement", claim: coffee, scope: alice },
      [{ object: stored, similarity: 0.97 }],
    );
    expect(match).toEqual({ action: "create", relatedIds: [], conflictingIds: ["k1"] });
  });

  it("never reinforces a near neighbour that says the opposite, and marks it as conflicting", () => {
    const likes = knowledgeObject({ id: "k1", type: "preference", statement: "Alice likes jazz" });
    const match = matchDeltaItem(
      { type: "preference", statement: "Alice does not like jazz", scope: alice },
      // MiniLM's cosine for this pair
      [{ object: likes, similarity: 0.912 }],
    );
    expect(match).toEqual({ action: "create", relatedIds: [], conflictingIds: ["k1"] });
  });

  it("ignores invalidated objects but may reinforce a demoted one", () => {
    const invalidated = knowledgeObject({
      id: "k1",
      state: "invalidated",
      invalidAt: "2026-01-02T00:00:00Z",
    });
    const demoted = knowledgeObject({ id: "k2", state: "demoted" });
    const match = matchDeltaItem({ type: "fact", statement: "a new statement", scope: alice }, [
      { object: invalidated, similarity: 0.99 },
      { object: demoted, similarity: 0.95 },
    ]);
    expect(match).toMatchObject({ action: "reinforce", target: { id: "k2" } });
  });

  it("picks the most similar duplicate and breaks ties by id", () => {
    const match = matchDeltaItem({ type: "fact", statement: "a new statement", scope: alice }, [
      { object: knowledgeObject({ id: "k3" }), similarity: 0.95 },
      { object: knowledgeObject({ id: "k2" }), similarity: 0.95 },
      { object: knowledgeObject({ id: "k1" }), similarity: 0.93 },
    ]);
    expect(match).toMatchObject({ target: { id: "k2" } });
  });

  it("links at most maxRelatedLinks neighbours, most similar first", () => {
    const neighbours = [0.76, 0.8, 0.85, 0.77, 0.78, 0.79, 0.81].map((similarity, i) => ({
      object: knowledgeObject({ id: `k${i}` }),
      similarity,
    }));
    const match = matchDeltaItem({ type: "fact", statement: "a new statement", scope: alice }, neighbours);
    expect(match).toEqual({
      action: "create",
      relatedIds: ["k2", "k6", "k1", "k5", "k4"],
      conflictingIds: [],
    });
  });

  it("gives the same answer whatever order the neighbours arrive in", () => {
    const neighbour = fc.record({
      id: fc.constantFrom("a", "b", "c", "d"),
      similarity: fc.double({ min: 0, max: 1, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.uniqueArray(neighbour, { selector: (n) => n.id, maxLength: 4 }), (raw) => {
        const list = raw.map((n) => ({ object: knowledgeObject({ id: n.id }), similarity: n.similarity }));
        const forward = matchDeltaItem({ type: "fact", statement: "a new statement", scope: alice }, list);
        const backward = matchDeltaItem(
          { type: "fact", statement: "a new statement", scope: alice },
          [...list].reverse(),
        );
        expect(backward).toEqual(forward);
      }),
    );
  });
});

describe("correction targets", () => {
  const living = knowledgeObject({
    id: "k1",
    claim: { subject: "alice", predicate: "lives in", object: "Bergen" },
  });
  const other = knowledgeObject({
    id: "k2",
    claim: { subject: "alice", predicate: "works at", object: "Acme" },
  });

  it("invalidates the object the correction names by id", () => {
    expect(
      findCorrectionTargets({ targetId: "k2", scope: alice }, [{ object: living }, { object: other }]),
    ).toEqual([other]);
  });

  it("matches by subject and predicate when the user did not say the object", () => {
    const targets = findCorrectionTargets(
      { claim: { subject: "Alice", predicate: "lives in" }, scope: alice },
      [{ object: living }, { object: other }],
    );
    expect(targets.map((t) => t.id)).toEqual(["k1"]);
  });

  it("falls back to the nearest neighbour only when it is similar enough", () => {
    expect(findCorrectionTargets({ scope: alice }, [{ object: living, similarity: 0.84 }])).toEqual([]);
    expect(findCorrectionTargets({ scope: alice }, [{ object: living, similarity: 0.86 }])).toEqual([living]);
  });

  it("never touches an object in another scope", () => {
    const bobs = knowledgeObject({ id: "k3", scope: { kind: "user", ownerIds: ["bob"] } });
    expect(findCorrectionTargets({ scope: alice }, [{ object: bobs, similarity: 0.99 }])).toEqual([]);
  });
});
