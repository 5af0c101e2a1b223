import { dimensionPolicy } from "@remram/contract";
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  dimensionOverlap,
  featureInfluence,
  featureScores,
  type RankableDoc,
  rankCandidates,
  recencyScore,
  rrfK,
  usageScore,
} from "./ranking.js";

const weights = dimensionPolicy.parse({}).retrievalWeights;
const now = "2026-11-22T00:00:00.000Z";
const context = { weights, now, recencyHalfLifeDays: 90, hints: [] as string[] };

function doc(id: string, overrides: Partial<RankableDoc> = {}): RankableDoc {
  return {
    id,
    confidence: 0.7,
    usageCount: 0,
    source: "reflection",
    observedAt: now,
    dimensionTags: [],
    ...overrides,
  };
}

describe("hybrid ranking", () => {
  it("ranks an item found by both signals above items found by one, with equal signal weights", () => {
    const docs = new Map(["a", "b", "c"].map((id) => [id, doc(id)]));
    const equal = { ...context, weights: { ...weights, bm25: 1, vector: 1 } };
    const ranked = rankCandidates(
      {
        bm25: [
          { id: "a", score: 9 },
          { id: "b", score: 5 },
        ],
        knn: [
          { id: "c", score: 0.9 },
          { id: "b", score: 0.8 },
        ],
        facet: [],
      },
      docs,
      equal,
      "fact",
    );
    expect(ranked.map((item) => item.doc.id)).toEqual(["b", "a", "c"]);
    expect(ranked[0]?.fused).toBeCloseTo(1 / (rrfK + 2) + 1 / (rrfK + 2));
  });

  // One BM25 list and one k-NN list, each with a top hit of its own and "both" in it: which signal leads decides.
  const leadDocs = new Map(["lexical-only", "vector-first", "both"].map((id) => [id, doc(id)]));
  const leadLists = {
    bm25: [
      { id: "both", score: 9 },
      { id: "lexical-only", score: 8 },
    ],
    knn: [
      { id: "vector-first", score: 0.71 },
      { id: "both", score: 0.7 },
    ],
    facet: [],
  };

  it("lets vectors lead by default, with BM25 lifting the vector runner-up it also finds first", () => {
    const ranked = rankCandidates(leadLists, leadDocs, context, "fact");
    expect(ranked.map((item) => item.doc.id)).toEqual(["both", "vector-first", "lexical-only"]);
    expect(ranked[0]?.fused).toBeCloseTo(weights.bm25 / (rrfK + 1) + weights.vector / (rrfK + 2));
  });

  it("lets BM25 lead among chunks: its top hit above the vectors' top hit, which lead among facts", () => {
    // Each signal's top hit is its own; "both" comes second in each.
    const topHits = {
      ...leadLists,
      bm25: [
        { id: "lexical-only", score: 9 },
        { id: "both", score: 8 },
      ],
    };
    const ranked = rankCandidates(topHits, leadDocs, context, "chunk");
    expect(ranked.map((item) => item.doc.id)).toEqual(["both", "lexical-only", "vector-first"]);
    expect(ranked[0]?.fused).toBeCloseTo(weights.chunkBm25 / (rrfK + 2) + weights.chunkVector / (rrfK + 2));
    expect(rankCandidates(topHits, leadDocs, context, "fact").map((item) => item.doc.id)).toEqual([
      "vector-first",
      "both",
      "lexical-only",
    ]);
  });

  it("breaks exact ties by id", () => {
    const docs = new Map(["z", "m", "a"].map((id) => [id, doc(id)]));
    const ranked = rankCandidates(
      { bm25: [{ id: "z", score: 1 }], knn: [{ id: "m", score: 1 }], facet: [{ id: "a", score: 1 }] },
      docs,
      { ...context, weights: { ...weights, bm25: 1, vector: 1, dimensionOverlap: 1 } },
      "fact",
    );
    expect(ranked.map((item) => item.doc.id)).toEqual(["a", "m", "z"]);
  });

  it("lets confidence reorder candidates of equal relevance", () => {
    const docs = new Map([
      ["low", doc("low", { confidence: 0.3 })],
      ["high", doc("high", { confidence: 0.95 })],
    ]);
    const ranked = rankCandidates(
      { bm25: [{ id: "low", score: 2 }], knn: [{ id: "high", score: 0.9 }], facet: [] },
      docs,
      context,
      "fact",
    );
    expect(ranked[0]?.doc.id).toBe("high");
  });

  it("adds the second hop's list to chunks at its own weight, and never to knowledge objects", () => {
    const docs = new Map(["intro", "job", "other"].map((id) => [id, doc(id)]));
    const lists = {
      bm25: [{ id: "intro", score: 5 }],
      knn: [
        { id: "intro", score: 0.8 },
        { id: "other", score: 0.6 },
      ],
      facet: [],
      hop: [{ id: "job", score: 7 }],
    };
    const ranked = rankCandidates(lists, docs, context, "chunk");
    const job = ranked.find((item) => item.doc.id === "job");
    expect(job?.hopRank).toBe(1);
    expect(job?.fused).toBeCloseTo(weights.chunkHop / (rrfK + 1));
    expect(ranked.find((item) => item.doc.id === "intro")?.hopRank).toBeNull();
    expect(rankCandidates(lists, docs, context, "fact").map((item) => item.doc.id)).not.toContain("job");
    // Without the list (weight 0 or no names to follow) "job" is no candidate at all.
    const { hop: _hop, ...firstHop } = lists;
    expect(rankCandidates(firstHop, docs, context, "chunk").map((item) => item.doc.id)).not.toContain("job");
  });

  it("ignores hits with no gated document, so nothing outside the gate is ever ranked", () => {
    const ranked = rankCandidates(
      { bm25: [{ id: "ghost", score: 99 }], knn: [], facet: [] },
      new Map(),
      context,
      "fact",
    );
    expect(ranked).toEqual([]);
  });

  it("halves recency every half-life and saturates usage", () => {
    expect(recencyScore("2026-08-24T00:00:00.000Z", now, 90)).toBeCloseTo(0.5, 5);
    expect(usageScore(0)).toBe(0);
    expect(usageScore(63)).toBe(1);
    expect(usageScore(5000)).toBe(1);
  });

  it("measures dimension overlap over tags and bare values", () => {
    expect(
      dimensionOverlap(["project:remram", "person:ana"], ["project:remram", "ana", "topic:x"]),
    ).toBeCloseTo(2 / 3);
    expect(dimensionOverlap(["project:remram"], [])).toBe(0);
  });

  it("keeps the feature multiplier within 1 ± featureInfluence/2 for any features", () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 1, noNaN: true }),
        fc.nat(100_000),
        fc.constantFrom("user", "tool", "reflection", "dream", "transcript", "artifact", "import" as const),
        (confidence, usageCount, source) => {
          const { multiplier } = featureScores(doc("x", { confidence, usageCount, source }), context);
          return multiplier >= 1 - featureInfluence / 2 && multiplier <= 1 + featureInfluence / 2;
        },
      ),
    );
  });
});
