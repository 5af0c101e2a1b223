import { describe, expect, it } from "vitest";
import type { MaturingObject } from "../core/knowledge.js";
import { knowledgeObject } from "../testing/fixtures.js";
import { mergeDuplicates, sameNamesAndNumbers } from "./merges.js";

const now = "2026-03-01T00:00:00.000Z";
const tea = (id: string, overrides: Partial<MaturingObject> = {}) =>
  knowledgeObject({ id, type: "preference", statement: "Alice takes tea in the morning", ...overrides });
const byId = (objects: readonly MaturingObject[]) => new Map(objects.map((o) => [o.id, o]));

describe("near-duplicate merging", () => {
  it("merges the same statement into the stronger object, which keeps the provenance of both", () => {
    const strong = tea("a", {
      confidence: 0.8,
      sessionIds: ["s1"],
      sourceTurnIds: ["t1"],
      reinforcementCount: 2,
      dimensions: { drink: ["tea"] },
      links: [{ relation: "related", targetId: "x" }],
    });
    const weak = tea("b", {
      statement: "alice takes tea in the  morning",
      confidence: 0.6,
      sessionIds: ["s2"],
      sourceTurnIds: ["t2"],
      dimensions: { time: ["morning"] },
      links: [{ relation: "evidenceFor", targetId: "p1" }],
      lastReinforcedAt: "2026-02-01T00:00:00.000Z",
    });
    const { changed, merges } = mergeDuplicates([weak, strong], [], now, undefined);
    expect(merges).toEqual([{ survivorId: "a", mergedIds: ["b"] }]);
    const result = byId(changed);
    expect(result.get("a")).toMatchObject({
      state: "active",
      confidence: 0.8,
      reinforcementCount: 3,
      sessionIds: ["s1", "s2"],
      sourceTurnIds: ["t1", "t2"],
      dimensions: { drink: ["tea"], time: ["morning"] },
      lastReinforcedAt: "2026-02-01T00:00:00.000Z",
      updatedAt: now,
      links: [
        { relation: "related", targetId: "x" },
        { relation: "evidenceFor", targetId: "p1" },
        { relation: "supersedes", targetId: "b" },
      ],
    });
    expect(result.get("b")).toMatchObject({
      state: "invalidated",
      invalidAt: now,
      links: expect.arrayContaining([{ relation: "supersededBy", targetId: "a" }]),
    });
  });

  it("points the principle the merged object was evidence for at the survivor too", () => {
    const survivor = tea("a", { confidence: 0.9 });
    const merged = tea("b", { links: [{ relation: "evidenceFor", targetId: "p" }] });
    const principle = knowledgeObject({
      id: "p",
      type: "principle",
      statement: "Alice has tea in the morning",
      links: [{ relation: "evidence", targetId: "b" }],
    });
    const result = byId(mergeDuplicates([survivor, merged, principle], [], now, undefined).changed);
    expect(result.get("p")?.links).toEqual([
      { relation: "evidence", targetId: "b" },
      { relation: "evidence", targetId: "a" },
    ]);
    expect(result.get("a")?.links).toContainEqual({ relation: "evidenceFor", targetId: "p" });
  });

  it("merges near neighbours above the threshold, chaining into one survivor", () => {
    const a = tea("a", { confidence: 0.9 });
    const b = tea("b", { statement: "Alice drinks tea in the morning" });
    const c = tea("c", { statement: "In the morning Alice drinks tea" });
    const pairs = [
      { aId: "a", bId: "b", similarity: 0.95 },
      { aId: "b", bId: "c", similarity: 0.93 },
    ];
    const { merges } = mergeDuplicates([a, b, c], pairs, now, undefined);
    expect(merges).toEqual([{ survivorId: "a", mergedIds: ["b", "c"] }]);
    expect(
      mergeDuplicates([a, b], [{ aId: "a", bId: "b", similarity: 0.91 }], now, undefined).merges,
    ).toEqual([]);
  });

  it("hands a survivor's absorbed list on when it is absorbed itself", () => {
    const a = tea("a", { confidence: 0.9 });
    const b = tea("b", { statement: "Alice drinks tea in the morning", confidence: 0.7 });
    const c = tea("c", { statement: "Alice has tea every morning", confidence: 0.5 });
    // b absorbs c first (the stronger edge), then a absorbs b.
    const pairs = [
      { aId: "b", bId: "c", similarity: 0.97 },
      { aId: "a", bId: "b", similarity: 0.95 },
    ];
    expect(mergeDuplicates([a, b, c], pairs, now, undefined).merges).toEqual([
      { survivorId: "a", mergedIds: ["b", "c"] },
    ]);
  });

  it("keeps apart what only looks alike: opposites, other names or numbers, other claims, refinements", () => {
    const likes = tea("a", { statement: "Alice likes jazz" });
    const dislikes = tea("b", { statement: "Alice does not like jazz" });
    expect(
      mergeDuplicates([likes, dislikes], [{ aId: "a", bId: "b", similarity: 0.96 }], now, undefined).merges,
    ).toEqual([]);

    const alice = tea("a", { statement: "Alice's bike is red" });
    const bob = tea("b", { statement: "Bob's bike is red" });
    expect(
      mergeDuplicates([alice, bob], [{ aId: "a", bId: "b", similarity: 0.95 }], now, undefined).merges,
    ).toEqual([]);

    const eight = tea("a", { statement: "The children go to bed at 8" });
    const nine = tea("b", { statement: "The children go to bed at 9" });
    expect(
      mergeDuplicates([eight, nine], [{ aId: "a", bId: "b", similarity: 0.97 }], now, undefined).merges,
    ).toEqual([]);

    const postgres = tea("a", { claim: { subject: "app", predicate: "database", object: "postgres" } });
    const sqlite = tea("b", { claim: { subject: "app", predicate: "database", object: "sqlite" } });
    expect(mergeDuplicates([postgres, sqlite], [], now, undefined).merges).toEqual([]);

    const tom = tea("a", {
      statement: "Alice has a cat named Tom",
      claim: { subject: "alice", predicate: "has pet", object: "cat" },
    });
    const jerry = tea("b", {
      statement: "Alice has a cat named Jerry",
      claim: { subject: "alice", predicate: "has pet", object: "cat" },
    });
    expect(mergeDuplicates([tom, jerry], [], now, undefined).merges).toEqual([]);
    const sameClaim = tea("c", {
      statement: "Alice's cat is called Tom",
      claim: { subject: "alice", predicate: "has pet", object: "cat" },
    });
    expect(mergeDuplicates([tom, sameClaim], [], now, undefined).merges).toHaveLength(1);

    const broad = tea("a", { links: [{ relation: "refinedBy", targetId: "b" }] });
    const narrow = tea("b", { links: [{ relation: "refines", targetId: "a" }] });
    expect(mergeDuplicates([broad, narrow], [], now, undefined).merges).toEqual([]);
  });

  it("merges only within one scope, type and governance key", () => {
    const mine = tea("a");
    const theirs = tea("b", { scope: { kind: "user", ownerIds: ["bob"] } });
    const fact = tea("c", { type: "fact" });
    expect(mergeDuplicates([mine, theirs, fact], [], now, undefined).merges).toEqual([]);
    const privateOne = tea("d");
    const governance = new Map([
      ["a", "household|true|*"],
      ["d", "private|true|*"],
    ]);
    expect(mergeDuplicates([mine, privateOne], [], now, undefined, governance).merges).toEqual([]);
    expect(mergeDuplicates([mine, privateOne], [], now, undefined).merges).toHaveLength(1);
  });

  it("lets the promoted or explicitly kept object survive and never merges two promoted ones", () => {
    const plain = tea("a", { confidence: 0.9 });
    const kept = tea("b", { confidence: 0.5, userDirective: true });
    expect(mergeDuplicates([plain, kept], [], now, undefined).merges).toEqual([
      { survivorId: "b", mergedIds: ["a"] },
    ]);
    const promoted = tea("c", { confidence: 0.4, promotion: "promoted" });
    expect(mergeDuplicates([plain, promoted], [], now, undefined).merges).toEqual([
      { survivorId: "c", mergedIds: ["a"] },
    ]);
    const other = tea("d", { promotion: "promoted" });
    expect(mergeDuplicates([promoted, other], [], now, undefined).merges).toEqual([]);
  });

  it("examines only what changed since the last cycle, unless asked for everything", () => {
    const settled = tea("a", { updatedAt: "2026-01-01T00:00:00.000Z" });
    const twin = tea("b", { updatedAt: "2026-01-02T00:00:00.000Z" });
    const since = "2026-02-01T00:00:00.000Z";
    expect(mergeDuplicates([settled, twin], [], now, since).merges).toEqual([]);
    expect(mergeDuplicates([settled, twin], [], now, undefined).merges).toHaveLength(1);
    const fresh = tea("c", { updatedAt: "2026-02-10T00:00:00.000Z" });
    expect(mergeDuplicates([settled, fresh], [], now, since).merges).toHaveLength(1);
  });

  it("is idempotent: merging again over its own output changes nothing", () => {
    const first = mergeDuplicates([tea("a"), tea("b")], [], now, undefined);
    expect(mergeDuplicates(first.changed, [], now, undefined)).toEqual({ changed: [], merges: [] });
  });
});

describe("names and numbers", () => {
  it("compares capitalised words after the first and numbers, folding case and a plural s", () => {
    expect(sameNamesAndNumbers("Never deploy on Fridays", "Friday is no deploy day")).toBe(true);
    expect(sameNamesAndNumbers("The app stores data in Postgres", "The app stores data in SQLite")).toBe(
      false,
    );
    expect(sameNamesAndNumbers("Bed at 8", "Bed at 9")).toBe(false);
  });
});
