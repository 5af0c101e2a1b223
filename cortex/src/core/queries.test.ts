import { describe, expect, it } from "vitest";
import {
  knnScoreFloor,
  lexicalQueryText,
  maxQueryTerms,
  normalizeHints,
  planSearches,
  rankingClock,
  signalHits,
} from "./queries.js";

const gate = [{ term: { status: "active" } }, { range: { confidence: { gte: 0.2 } } }];
const vectorGate = [{ term: { status: "active" } }];
const base = {
  knowledgeIndex: "k",
  knowledgeVectorIndex: "kv",
  chunkIndex: "c",
  requestText: "where is the boat",
  knowledgeGate: gate,
  knowledgeVectorGate: vectorGate,
  chunkGate: gate,
  vector: [0.1, 0.2],
  hints: [] as string[],
  candidates: 40,
};

describe("the search plan of one retrieval", () => {
  it("puts the policy gate inside every BM25 and k-NN search, for objects and chunks", () => {
    const searches = planSearches(base);
    expect(searches.map((search) => `${search.kind}:${search.signal}:${search.index}`)).toEqual([
      "fact:bm25:k",
      "fact:knn:kv",
      "chunk:bm25:c",
      "chunk:knn:c",
    ]);
    for (const search of searches) {
      const query = search.body.query as {
        bool?: { filter: unknown };
        knn?: { embedding: { filter: { bool: { filter: unknown } } } };
      };
      const filter = search.signal === "knn" ? query.knn?.embedding.filter.bool.filter : query.bool?.filter;
      // Knowledge vectors carry every gate field but confidence; retrieval re-gates their objects in full.
      expect(filter).toBe(search.kind === "fact" && search.signal === "knn" ? vectorGate : gate);
    }
  });

  it("drops the k-NN searches without a query vector and chunk searches without a chunk gate", () => {
    const searches = planSearches({ ...base, vector: null, chunkGate: null });
    expect(searches.map((search) => `${search.kind}:${search.signal}`)).toEqual(["fact:bm25"]);
  });

  it("adds a gated facet search only when there are hints, splitting tags from bare values", () => {
    const [, , facet] = planSearches({ ...base, chunkGate: null, hints: ["project:remram", "ana"] });
    expect(facet?.signal).toBe("facet");
    expect(facet?.body.query).toEqual({
      bool: {
        filter: [
          ...gate,
          {
            bool: {
              should: [
                { terms: { dimensionTags: ["project:remram"] } },
                { terms: { dimensionValues: ["ana"] } },
              ],
              minimum_should_match: 1,
            },
          },
        ],
      },
    });
  });

  it("never asks OpenSearch for embeddings back and always sorts ties by id", () => {
    for (const search of planSearches({ ...base, hints: ["x"] })) {
      const vectorSearch = search.kind === "fact" && search.signal === "knn";
      expect(search.body._source).toEqual(vectorSearch ? false : { excludes: ["embedding"] });
      expect(JSON.stringify(search.body.sort)).toContain('{"id":"asc"}');
    }
  });

  it("normalizes hints so equal sets plan equal searches", () => {
    expect(normalizeHints([" Project:Remram", "ana", "ANA", ""])).toEqual(["ana", "project:remram"]);
  });

  it("drops k-NN neighbours below the cosine floor but keeps every BM25 hit", () => {
    const hits = [
      { _id: "near", _score: knnScoreFloor(0.5) },
      { _id: "far", _score: knnScoreFloor(0.1) },
    ];
    expect(signalHits(hits, "knn", knnScoreFloor(0.2)).map((hit) => hit.id)).toEqual(["near"]);
    expect(signalHits(hits, "bm25", knnScoreFloor(0.2)).map((hit) => hit.id)).toEqual(["near", "far"]);
  });

  it("ranks against the hour, so calls within it see the same recency", () => {
    expect(rankingClock(new Date("2026-11-22T18:59:59.999Z"))).toBe("2026-11-22T18:00:00.000Z");
  });

  it("keeps a BM25 query within OpenSearch's clause limit, however many terms the request has", () => {
    expect(lexicalQueryText("where is the boat")).toBe("where is the boat");
    expect(lexicalQueryText("1 ".repeat(4_000))).toBe("1");
    expect(lexicalQueryText("x-".repeat(4_000))).toBe("x");
    const many = Array.from({ length: 2_000 }, (_, i) => `w${i}`).join(" ");
    expect(lexicalQueryText(many).split(" ")).toHaveLength(maxQueryTerms);
    expect(lexicalQueryText("中".repeat(500) + "文".repeat(500))).toBe("中 文");
  });
});
