/**
 * Step 2 of RAM as data: the searches of one retrieval (BM25, k-NN and facet matches over knowledge objects and
 * chunks), each with the policy gate inside, and the mapping from stored documents to rankable items. Pure.
 */
import type { ChunkDoc, FactDoc } from "./assembly.js";
import type { FilterClause } from "./policy.js";
import type { SignalHit } from "./ranking.js";

export type Signal = "bm25" | "knn" | "facet";
export type ItemKind = "fact" | "chunk";

export interface PlannedSearch {
  signal: Signal;
  kind: ItemKind;
  index: string;
  body: Record<string, unknown>;
}

export interface SearchPlanInput {
  knowledgeIndex: string;
  /** Knowledge vectors live apart from the objects (templates.ts); k-NN over them returns ids only. */
  knowledgeVectorIndex: string;
  chunkIndex: string;
  requestText: string;
  knowledgeGate: FilterClause[];
  /** The knowledge gate without the confidence floor, which vector documents do not carry. */
  knowledgeVectorGate: FilterClause[];
  /** null: the request may not see chunks. */
  chunkGate: FilterClause[] | null;
  vector: readonly number[] | null;
  hints: readonly string[];
  candidates: number;
}

/** Never returned to clients or used in ranking; leaving it out keeps responses small. */
export const sourceExcludes = ["embedding"];

/** Deterministic order inside OpenSearch too: equal scores fall back to the id. */
const scoreThenId = [{ _score: "desc" }, { id: "asc" }];

function facetClause(hints: readonly string[]): FilterClause {
  const tags = hints.filter((hint) => hint.includes(":"));
  const values = hints.filter((hint) => !hint.includes(":"));
  return {
    bool: {
      should: [
        ...(tags.length > 0 ? [{ terms: { dimensionTags: tags } }] : []),
        ...(values.length > 0 ? [{ terms: { dimensionValues: values } }] : []),
      ],
      minimum_should_match: 1,
    },
  };
}

/** Most terms one BM25 query carries: OpenSearch refuses more than 1024 clauses (terms × the two fields). */
export const maxQueryTerms = 400;

/** Terms roughly as the standard tokenizer cuts them: ideographs and emoji one by one, else letter/digit runs. */
const queryTerms =
  /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Extended_Pictographic}]|[\p{L}\p{N}\p{M}_]+/gu;

/**
 * The text the BM25 searches look for: the request as given, or, when it has more terms than a query may carry,
 * its first distinct terms. Otherwise a pasted log or 8,000 characters of "1 1 1" fail both lexical searches and
 * the answer has no lexical results at all.
 */
export function lexicalQueryText(text: string): string {
  const terms = text.match(queryTerms) ?? [];
  if (terms.length <= maxQueryTerms) return text;
  return [...new Set(terms.map((term) => term.toLowerCase()))].slice(0, maxQueryTerms).join(" ");
}

export function planSearches(input: SearchPlanInput): PlannedSearch[] {
  const searches: PlannedSearch[] = [];
  const lexicalText = lexicalQueryText(input.requestText);
  const targets: {
    kind: ItemKind;
    index: string;
    gate: FilterClause[];
    knn: { index: string; gate: FilterClause[]; source: false | { excludes: string[] } };
    fields: string[];
  }[] = [
    {
      kind: "fact",
      index: input.knowledgeIndex,
      gate: input.knowledgeGate,
      // Hits come back as ids; retrieval fetches them through the full gate (hydrateKnnFacts).
      knn: { index: input.knowledgeVectorIndex, gate: input.knowledgeVectorGate, source: false },
      fields: ["statement^2", "claim.object"],
    },
  ];
  if (input.chunkGate !== null) {
    targets.push({
      kind: "chunk",
      index: input.chunkIndex,
      gate: input.chunkGate,
      knn: { index: input.chunkIndex, gate: input.chunkGate, source: { excludes: sourceExcludes } },
      fields: ["text", "title^0.5"],
    });
  }
  const common = { size: input.candidates, _source: { excludes: sourceExcludes }, track_total_hits: false };
  for (const target of targets) {
    searches.push({
      signal: "bm25",
      kind: target.kind,
      index: target.index,
      body: {
        ...common,
        query: {
          bool: {
            must: { multi_match: { query: lexicalText, fields: target.fields, type: "best_fields" } },
            filter: target.gate,
          },
        },
        sort: scoreThenId,
      },
    });
    if (input.vector !== null) {
      searches.push({
        signal: "knn",
        kind: target.kind,
        index: target.knn.index,
        body: {
          ...common,
          _source: target.knn.source,
          // The gate is the k-NN `filter`: Lucene filters during the graph search, so k results are all eligible.
          query: {
            knn: {
              embedding: {
                vector: input.vector,
                k: input.candidates,
                filter: { bool: { filter: target.knn.gate } },
              },
            },
          },
          sort: scoreThenId,
        },
      });
    }
    if (input.hints.length > 0) {
      searches.push({
        signal: "facet",
        kind: target.kind,
        index: target.index,
        body: {
          ...common,
          query: { bool: { filter: [...target.gate, facetClause(input.hints)] } },
          sort: [{ confidence: "desc" }, { id: "asc" }],
        },
      });
    }
  }
  return searches;
}

/** Lower-cased, trimmed, de-duplicated, sorted: equal hint sets plan equal searches. */
export function normalizeHints(hints: readonly string[] | undefined): string[] {
  return [
    ...new Set((hints ?? []).map((hint) => hint.trim().toLowerCase()).filter((hint) => hint !== "")),
  ].sort();
}

/** The Lucene cosine score is (1 + cos) / 2; below this similarity a k-NN neighbour is noise, not a candidate. */
export function knnScoreFloor(minCosine: number): number {
  return (1 + minCosine) / 2;
}

export interface StoredGoverned {
  id: string;
  scope: FactDoc["scope"];
  privacy: FactDoc["privacy"];
  confidence: number;
  usageCount?: number;
  provenance: { source: FactDoc["source"]; observedAt: string };
  dimensions?: Record<string, string[]>;
  dimensionTags?: string[];
}

export interface StoredKnowledge extends StoredGoverned {
  statement: string;
  type: FactDoc["type"];
  claim?: { subject: string };
  lastReinforcedAt?: string;
}

export interface StoredChunk extends StoredGoverned {
  level: ChunkDoc["level"];
  sourceId: string;
  sourceKind: string;
  title?: string;
  path?: string;
  text: string;
  parentId: string | null;
  prevId: string | null;
  nextId: string | null;
}

export function toFactDoc(source: StoredKnowledge): FactDoc {
  return {
    id: source.id,
    scope: source.scope,
    privacy: source.privacy,
    statement: source.statement,
    type: source.type,
    claimSubject: source.claim === undefined ? null : source.claim.subject.trim().toLowerCase(),
    dimensions: source.dimensions ?? {},
    confidence: source.confidence,
    usageCount: source.usageCount ?? 0,
    source: source.provenance.source,
    // Reinforcement refreshes an object: recency counts from the last time it was asserted.
    observedAt: source.lastReinforcedAt ?? source.provenance.observedAt,
    dimensionTags: source.dimensionTags ?? [],
  };
}

export function toChunkDoc(source: StoredChunk): ChunkDoc {
  return {
    id: source.id,
    scope: source.scope,
    privacy: source.privacy,
    level: source.level,
    sourceId: source.sourceId,
    sourceKind: source.sourceKind,
    title: source.title ?? null,
    path: source.path ?? null,
    text: source.text,
    parentId: source.parentId,
    prevId: source.prevId,
    nextId: source.nextId,
    confidence: source.confidence,
    usageCount: source.usageCount ?? 0,
    source: source.provenance.source,
    observedAt: source.provenance.observedAt,
    dimensionTags: source.dimensionTags ?? [],
  };
}

/** Hits of one signal as ranking input, dropping k-NN neighbours below the similarity floor. */
export function signalHits(
  hits: readonly { _id: string; _score: number | null }[],
  signal: Signal,
  knnFloor: number,
): SignalHit[] {
  return hits
    .map((hit) => ({ id: hit._id, score: hit._score ?? 0 }))
    .filter((hit) => signal !== "knn" || hit.score >= knnFloor);
}

/** Recency is computed against the hour, so two identical calls within it rank identically. */
export function rankingClock(now: Date): string {
  const hour = new Date(now);
  hour.setUTCMinutes(0, 0, 0);
  return hour.toISOString();
}
