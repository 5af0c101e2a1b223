import { dimensionPolicy, type TraceItem } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { type RankableDoc, rankCandidates, rrfK } from "../cortex/src/core/ranking.js";
import { fuse, tracedQuestion } from "./fusion.js";

const weights = dimensionPolicy.parse({}).retrievalWeights;
const now = "2026-11-29T00:00:00.000Z";

function item(id: string, bm25Rank: number | null, knnRank: number | null, multiplier = 1): TraceItem {
  return {
    id,
    kind: "chunk",
    bm25Rank,
    bm25Score: bm25Rank === null ? null : 10 / bm25Rank,
    knnRank,
    knnScore: knnRank === null ? null : 1 - knnRank / 100,
    facetRank: null,
    hopRank: null,
    fused: 0,
    features: { confidence: 0, recency: 0, usage: 0, provenanceTrust: 0, dimensionOverlap: 0, multiplier },
    score: 0,
    selected: false,
    excludedBecause: null,
  };
}

describe("fusion re-scored offline", () => {
  const items = [
    item("a", 1, 6),
    item("b", 2, null),
    item("c", null, 1),
    item("d", 4, 2, 1.04),
    item("e", 3, 3),
  ];
  const traced = tracedQuestion({ kind: "single-hop", evidence: ["t-d"] }, items, "chunk", (id) => `t-${id}`);

  it("keeps one kind's items, named as the evidence names them, with their ranks, scores and multiplier", () => {
    expect(traced.evidence).toEqual(["t-d"]);
    expect(traced.candidates[3]).toEqual({
      turn: "t-d",
      bm25Rank: 4,
      bm25Score: 2.5,
      knnRank: 2,
      knnScore: 0.98,
      hopRank: null,
      multiplier: 1.04,
    });
    expect(
      tracedQuestion({ kind: "single-hop", evidence: [] }, items, "fact", (id) => id).candidates,
    ).toEqual([]);
  });

  it("orders candidates exactly as Cortex's ranking does under the same RRF weights", () => {
    const docs = new Map<string, RankableDoc>(
      items.map((candidate) => [
        candidate.id,
        {
          id: candidate.id,
          confidence: 0.5,
          usageCount: 0,
          source: "transcript",
          observedAt: now,
          dimensionTags: [],
        },
      ]),
    );
    const byRank = (field: "bm25Rank" | "knnRank") =>
      items
        .filter((candidate) => candidate[field] !== null)
        .sort((a, b) => (a[field] ?? 0) - (b[field] ?? 0))
        .map((candidate) => ({ id: candidate.id, score: 1 }));
    const cortex = rankCandidates(
      { bm25: byRank("bm25Rank"), knn: byRank("knnRank"), facet: [] },
      docs,
      { weights, now, recencyHalfLifeDays: 90, hints: [] },
      "chunk",
    ).map((ranked) => `t-${ranked.doc.id}`);
    // Cortex's multiplier here is the same for every document; the offline fusion takes the traced ones (all 1 but d).
    const offline = fuse(
      traced.candidates.map((candidate) => ({ ...candidate, multiplier: 1 })),
      { method: "rrf", k: rrfK, bm25: weights.chunkBm25, vector: weights.chunkVector },
    );
    expect(offline).toEqual(cortex);
    // a 1/2 + 0.75/7, d 1/5 + 0.75/3, e 1/4 + 0.75/4, c 0.75/2, b 1/3.
    expect(offline).toEqual(["t-a", "t-d", "t-e", "t-c", "t-b"]);
  });

  it("scales each list by its best score for a max-normalised sum, and applies the multiplier", () => {
    // a 1 + 0.25·0.94/0.99, e 1/3 + 0.25·0.97/0.99, d (1/4 + 0.25·0.98/0.99)·1.04, b 1/2, c 0.25.
    expect(fuse(traced.candidates, { method: "max-normalized", bm25: 1, vector: 0.25 })).toEqual([
      "t-a",
      "t-e",
      "t-d",
      "t-b",
      "t-c",
    ]);
  });
});
