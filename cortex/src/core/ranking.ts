/**
 * Step 3 of RAM: deterministic hybrid scoring. Weighted reciprocal rank fusion of the BM25, k-NN and facet
 * candidate lists, multiplied by rank features; ties broken by id. Why RRF and not a weighted normalized sum:
 * docs/cortex-ranking.md.
 */
import type { DimensionPolicy, ProvenanceSource } from "@remram/contract";

/** One hit of one signal, in the order OpenSearch returned it (best first). */
export interface SignalHit {
  id: string;
  score: number;
}

export interface SignalLists {
  bm25: readonly SignalHit[];
  knn: readonly SignalHit[];
  facet: readonly SignalHit[];
  /** The second hop's BM25 hits (core/hop.ts), chunks only; absent when there was none. */
  hop?: readonly SignalHit[];
}

/** What ranking needs to know about a candidate, read from its stored document. */
export interface RankableDoc {
  id: string;
  confidence: number;
  usageCount: number;
  source: ProvenanceSource;
  /** When the knowledge was observed; drives recency. */
  observedAt: string;
  dimensionTags: readonly string[];
}

export interface FeatureScores {
  confidence: number;
  recency: number;
  usage: number;
  provenanceTrust: number;
  dimensionOverlap: number;
  multiplier: number;
}

export interface RankedCandidate<D extends RankableDoc> {
  doc: D;
  bm25Rank: number | null;
  bm25Score: number | null;
  knnRank: number | null;
  knnScore: number | null;
  facetRank: number | null;
  hopRank: number | null;
  fused: number;
  features: FeatureScores;
  score: number;
}

export interface RankingContext {
  weights: DimensionPolicy["retrievalWeights"];
  now: string;
  recencyHalfLifeDays: number;
  /** Lower-cased domain hints: "name:value" tags or bare values. */
  hints: readonly string[];
}

/**
 * The RRF constant. Cormack et al. use 60 for long result lists; our lists are 40–100 candidates and the top few
 * matter most: on two labelled corpora k = 1 (with BM25 weighted 0.35) ranked answers best (docs/cortex-ranking.md).
 */
export const rrfK = 1;

/** How far rank features may move a fused score: the multiplier stays within 1 ± featureInfluence / 2. */
export const featureInfluence = 0.1;

/** Usage saturates: 63 retrievals count as much as a thousand. */
const usageSaturation = 63;

/** How much a source is trusted: what a person said outranks what a model inferred. */
export const provenanceTrust: Record<ProvenanceSource, number> = {
  user: 1,
  artifact: 0.95,
  dream: 0.85,
  tool: 0.8,
  reflection: 0.7,
  import: 0.6,
  transcript: 0.6,
};

const dayMs = 86_400_000;

export function recencyScore(observedAt: string, now: string, halfLifeDays: number): number {
  const ageDays = Math.max(0, Date.parse(now) - Date.parse(observedAt)) / dayMs;
  return 0.5 ** (ageDays / halfLifeDays);
}

export function usageScore(usageCount: number): number {
  return Math.min(1, Math.log2(1 + Math.max(0, usageCount)) / Math.log2(1 + usageSaturation));
}

/** Share of the hints the item carries; a bare hint matches any dimension with that value. */
export function dimensionOverlap(tags: readonly string[], hints: readonly string[]): number {
  if (hints.length === 0) return 0;
  const values = new Set(tags.map((tag) => tag.slice(tag.indexOf(":") + 1)));
  const tagSet = new Set(tags);
  const matched = hints.filter((hint) => (hint.includes(":") ? tagSet.has(hint) : values.has(hint))).length;
  return matched / hints.length;
}

export function featureScores(doc: RankableDoc, context: RankingContext): FeatureScores {
  const w = context.weights;
  const confidence = doc.confidence;
  const recency = recencyScore(doc.observedAt, context.now, context.recencyHalfLifeDays);
  const usage = usageScore(doc.usageCount);
  const trust = provenanceTrust[doc.source];
  const overlap = dimensionOverlap(doc.dimensionTags, context.hints);
  const weightSum = w.confidence + w.recency + w.usage + w.provenanceTrust + w.dimensionOverlap;
  const mean =
    weightSum === 0
      ? 0.5
      : (w.confidence * confidence +
          w.recency * recency +
          w.usage * usage +
          w.provenanceTrust * trust +
          w.dimensionOverlap * overlap) /
        weightSum;
  // A nudge of at most ±featureInfluence/2 around 1: features reorder candidates of similar relevance, they
  // cannot outweigh relevance (measured: a wider swing scrambled RRF's small rank gaps, docs/cortex-ranking.md).
  const multiplier = 1 + featureInfluence * (mean - 0.5);
  return { confidence, recency, usage, provenanceTrust: trust, dimensionOverlap: overlap, multiplier };
}

/** Order by score, then id: the same candidates always come out in the same order. */
export function compareRanked(
  a: { score: number; doc: { id: string } },
  b: { score: number; doc: { id: string } },
): number {
  if (a.score !== b.score) return b.score - a.score;
  return a.doc.id < b.doc.id ? -1 : a.doc.id > b.doc.id ? 1 : 0;
}

/** What is ranked: knowledge objects and chunks fuse their lists with weights of their own. */
export type RankedKind = "fact" | "chunk";

/**
 * The fusion weights of one kind. A knowledge object is a distilled statement that a paraphrase finds by meaning;
 * a chunk is raw talk or output, where the exact names and rare words find it (docs/cortex-ranking.md, "Tuning").
 */
export function signalWeights(
  weights: DimensionPolicy["retrievalWeights"],
  kind: RankedKind,
): { bm25: number; vector: number; facet: number; hop: number } {
  return kind === "fact"
    ? { bm25: weights.bm25, vector: weights.vector, facet: weights.dimensionOverlap, hop: 0 }
    : {
        bm25: weights.chunkBm25,
        vector: weights.chunkVector,
        facet: weights.dimensionOverlap,
        hop: weights.chunkHop,
      };
}

/**
 * Fuse the signal lists and apply the rank features. Candidates without a document (not returned by the
 * gated queries) are ignored, so nothing outside the policy gate can be ranked.
 */
export function rankCandidates<D extends RankableDoc>(
  signals: SignalLists,
  docs: ReadonlyMap<string, D>,
  context: RankingContext,
  kind: RankedKind,
): RankedCandidate<D>[] {
  const parts = new Map<string, Omit<RankedCandidate<D>, "features" | "score">>();
  const entry = (id: string) => {
    const doc = docs.get(id);
    if (doc === undefined) return undefined;
    let part = parts.get(id);
    if (part === undefined) {
      part = {
        doc,
        bm25Rank: null,
        bm25Score: null,
        knnRank: null,
        knnScore: null,
        facetRank: null,
        hopRank: null,
        fused: 0,
      };
      parts.set(id, part);
    }
    return part;
  };
  const weights = signalWeights(context.weights, kind);
  signals.bm25.forEach((hit, index) => {
    const part = entry(hit.id);
    if (part === undefined || part.bm25Rank !== null) return;
    part.bm25Rank = index + 1;
    part.bm25Score = hit.score;
    part.fused += weights.bm25 / (rrfK + index + 1);
  });
  signals.knn.forEach((hit, index) => {
    const part = entry(hit.id);
    if (part === undefined || part.knnRank !== null) return;
    part.knnRank = index + 1;
    part.knnScore = hit.score;
    part.fused += weights.vector / (rrfK + index + 1);
  });
  signals.facet.forEach((hit, index) => {
    const part = entry(hit.id);
    if (part === undefined || part.facetRank !== null) return;
    part.facetRank = index + 1;
    part.fused += weights.facet / (rrfK + index + 1);
  });
  // A list at weight 0 adds no candidates: knowledge objects never take the second hop's.
  (weights.hop > 0 ? (signals.hop ?? []) : []).forEach((hit, index) => {
    const part = entry(hit.id);
    if (part === undefined || part.hopRank !== null) return;
    part.hopRank = index + 1;
    part.fused += weights.hop / (rrfK + index + 1);
  });
  const ranked = [...parts.values()].map((part) => {
    const features = featureScores(part.doc, context);
    return { ...part, features, score: part.fused * features.multiplier };
  });
  return ranked.sort(compareRanked);
}
