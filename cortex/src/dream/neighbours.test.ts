import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type NeighbourList,
  neighbourFloor,
  neighbourListFrom,
  neighbourLookupOrder,
  neighboursPerObject,
  pairsFromNeighbourLists,
} from "./neighbours.js";

const at = "2026-03-01T00:00:00.000Z";
const list = (id: string, neighbours: [string, number][], vector = true): NeighbourList => ({
  id,
  computedAt: at,
  vector,
  neighbours: neighbours.map(([n, similarity]) => ({ id: n, similarity })),
});

describe("the neighbour graph", () => {
  it("keeps an object's nearest neighbours above the floor, never itself, nearest first then by id", () => {
    const hits = [
      { id: "self", similarity: 1 },
      { id: "far", similarity: neighbourFloor - 0.01 },
      { id: "b", similarity: 0.9 },
      { id: "a", similarity: 0.9 },
      { id: "c", similarity: 0.95 },
    ];
    expect(neighbourListFrom("self", hits, at)).toEqual(
      list("self", [
        ["c", 0.95],
        ["a", 0.9],
        ["b", 0.9],
      ]),
    );
  });

  it("keeps at most neighboursPerObject", () => {
    const hits = Array.from({ length: 20 }, (_, i) => ({ id: `n${i}`, similarity: 0.8 }));
    expect(neighbourListFrom("x", hits, at).neighbours).toHaveLength(neighboursPerObject);
  });

  it("reads each pair once with sorted ids, from either side's list, among known objects only", () => {
    const pairs = pairsFromNeighbourLists(
      [
        list("b", [
          ["a", 0.9],
          ["gone", 0.99],
        ]),
        list("a", [["b", 0.9]]),
        list("c", [["a", 0.8]]),
      ],
      new Set(["a", "b", "c"]),
    );
    expect(pairs).toEqual([
      { aId: "a", bId: "b", similarity: 0.9 },
      { aId: "a", bId: "c", similarity: 0.8 },
    ]);
  });

  it("marks the pairs of lists looked up this cycle as fresh", () => {
    const pairs = pairsFromNeighbourLists(
      [list("a", [["b", 0.9]]), list("c", [["a", 0.8]]), list("b", [["a", 0.9]])],
      new Set(["a", "b", "c"]),
      new Set(["c"]),
    );
    expect(pairs).toEqual([
      { aId: "a", bId: "b", similarity: 0.9 },
      { aId: "a", bId: "c", similarity: 0.8, fresh: true },
    ]);
  });

  it("gives the same pairs whatever the order of the lists", () => {
    const ids = ["a", "b", "c", "d", "e"];
    const arbitraryList = fc.record({
      id: fc.constantFrom(...ids),
      neighbours: fc.array(fc.tuple(fc.constantFrom(...ids), fc.double({ min: 0.75, max: 1, noNaN: true }))),
    });
    fc.assert(
      fc.property(fc.array(arbitraryList, { maxLength: 8 }), (raw) => {
        const lists = raw.map((r) => list(r.id, r.neighbours));
        const known = new Set(ids);
        const builtNow = new Set(["b", "d"]);
        expect(pairsFromNeighbourLists([...lists].reverse(), known, builtNow)).toEqual(
          pairsFromNeighbourLists(lists, known, builtNow),
        );
      }),
    );
  });

  it("looks up changed objects first, then the rest by id, and retries vectorless ones only with a model", () => {
    const objects = [
      { id: "d", changed: false },
      { id: "c", changed: true },
      { id: "b", changed: false },
      { id: "a", changed: false },
      { id: "listed", changed: true },
      { id: "vectorless", changed: false },
    ];
    const lists = new Map([
      ["listed", list("listed", [])],
      ["vectorless", list("vectorless", [], false)],
    ]);
    expect(neighbourLookupOrder(objects, lists, false)).toEqual(["c", "a", "b", "d"]);
    expect(neighbourLookupOrder(objects, lists, true)).toEqual(["c", "a", "b", "d", "vectorless"]);
  });
});
