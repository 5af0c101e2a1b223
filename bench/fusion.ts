/**
 * Fusion re-scored offline, as plain data: the candidates a debug trace lists for one question (signal ranks and
 * scores, the feature multiplier), saved as JSON lines, and the same candidates fused again under another setting.
 * bench/devset-fusion.ts runs a grid of settings over such a file.
 */
import type { TraceItem } from "@remram/contract";
import type { QuestionKind } from "./conversation-recall.js";

export interface TracedCandidate {
  turn: string | undefined;
  bm25Rank: number | null;
  bm25Score: number | null;
  knnRank: number | null;
  knnScore: number | null;
  /** The second hop's rank; absent from traces written before it existed. */
  hopRank?: number | null;
  multiplier: number;
}

export interface TracedQuestion {
  kind: QuestionKind;
  evidence: string[];
  candidates: TracedCandidate[];
}

/** One question's line of a traces file: the trace's items of one kind, named by what evidence names. */
export function tracedQuestion(
  question: { kind: QuestionKind; evidence: string[] },
  items: readonly TraceItem[],
  kind: TraceItem["kind"],
  nameOf: (id: string) => string | undefined,
): TracedQuestion {
  const candidates = items
    .filter((item) => item.kind === kind)
    .map((item) => ({
      turn: nameOf(item.id),
      bm25Rank: item.bm25Rank,
      bm25Score: item.bm25Score,
      knnRank: item.knnRank,
      knnScore: item.knnScore,
      hopRank: item.hopRank,
      multiplier: item.features.multiplier,
    }));
  return { kind: question.kind, evidence: question.evidence, candidates };
}

export type Fusion =
  | { method: "rrf"; k: number; bm25: number; vector: number; hop?: number }
  /** Each list's scores scaled to 0..1 by its best hit, then a weighted sum. */
  | { method: "max-normalized"; bm25: number; vector: number };

export function fusedScore(
  candidate: TracedCandidate,
  fusion: Fusion,
  best: { bm25: number; knn: number },
): number {
  if (fusion.method === "rrf") {
    // A traces file written before the second hop existed has no hopRank at all.
    const part = (rank: number | null | undefined, weight: number) =>
      rank === null || rank === undefined ? 0 : weight / (fusion.k + rank);
    return (
      part(candidate.bm25Rank, fusion.bm25) +
      part(candidate.knnRank, fusion.vector) +
      part(candidate.hopRank, fusion.hop ?? 0)
    );
  }
  const part = (score: number | null, top: number, weight: number) =>
    score === null || top <= 0 ? 0 : (weight * score) / top;
  return (
    part(candidate.bm25Score, best.bm25, fusion.bm25) + part(candidate.knnScore, best.knn, fusion.vector)
  );
}

/** The candidates' turns, best first, under one fusion (the feature multiplier applied as Cortex applies it). */
export function fuse(candidates: readonly TracedCandidate[], fusion: Fusion): string[] {
  const best = {
    bm25: Math.max(0, ...candidates.map((candidate) => candidate.bm25Score ?? 0)),
    knn: Math.max(0, ...candidates.map((candidate) => candidate.knnScore ?? 0)),
  };
  return candidates
    .map((candidate, index) => ({
      turn: candidate.turn,
      index,
      score: fusedScore(candidate, fusion, best) * candidate.multiplier,
    }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .flatMap((entry) => (entry.turn === undefined ? [] : [entry.turn]));
}

/** The settings bench/devset-fusion.ts compares: RRF over k and both weights, and max-normalised sums. */
export function fusionGrid(): Fusion[] {
  const fusions: Fusion[] = [];
  for (const k of [1, 5, 10, 20, 60]) {
    for (const bm25 of [0.35, 0.5, 0.75, 1]) {
      for (const vector of [0.25, 0.5, 0.75, 1]) fusions.push({ method: "rrf", k, bm25, vector });
    }
  }
  for (const bm25 of [0.25, 0.5, 0.75, 1]) {
    for (const vector of [0.25, 0.5, 0.75, 1]) fusions.push({ method: "max-normalized", bm25, vector });
  }
  return fusions;
}

export const describeFusion = (fusion: Fusion) =>
  fusion.method === "rrf"
    ? `rrf k=${fusion.k} bm25=${fusion.bm25} vector=${fusion.vector}`
    : `max-normalized bm25=${fusion.bm25} vector=${fusion.vector}`;

/** The candidates' turns in the trace's own order, which is Cortex's ranking. */
export function asRanked(candidates: readonly TracedCandidate[]): string[] {
  return candidates.flatMap((candidate) => (candidate.turn === undefined ? [] : [candidate.turn]));
}

/** The candidates' turns as one signal alone ranked them. */
export function bySignal(candidates: readonly TracedCandidate[], signal: "bm25Rank" | "knnRank"): string[] {
  return asRanked(
    candidates
      .filter((candidate) => candidate[signal] !== null)
      .sort((a, b) => (a[signal] ?? 0) - (b[signal] ?? 0)),
  );
}
