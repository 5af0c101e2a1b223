/**
 * The RAM read path as one function: gate → candidates in one _msearch → hybrid ranking → assembly. Every failure
 * below it turns into a degraded answer, never an error: the gateway must not be blocked by memory.
 */

import {
  type DimensionPolicy,
  documentHashOf,
  type RetrieveRequest,
  type RetrieveResponse,
  type TraceItem,
} from "@remram/contract";
import { countTokens } from "gpt-tokenizer";
import type { RetrievalSettings } from "../context.js";
import {
  assembleBundle,
  type ChunkDoc,
  expansionCandidates,
  type FactDoc,
  slicedTokenCount,
} from "../core/assembly.js";
import { hopCandidates, hopSourceItems, hopTerms } from "../core/hop.js";
import { detectLiveState } from "../core/intent.js";
import { chunkGate, type FilterClause, knowledgeGate, knowledgeVectorGate } from "../core/policy.js";
import {
  knnScoreFloor,
  normalizeHints,
  planSearches,
  rankingClock,
  type Signal,
  type StoredChunk,
  type StoredKnowledge,
  signalHits,
  sourceExcludes,
  toChunkDoc,
  toFactDoc,
} from "../core/queries.js";
import { type RankedCandidate, rankCandidates, rrfK, type SignalLists } from "../core/ranking.js";
import type { UsageTracker } from "../knowledge/usage.js";
import type { CortexMetrics } from "../metrics.js";
import type { CortexStore } from "../store/client.js";
import type { Embedder } from "../store/embedder.js";
import { multiSearch, type SearchHit, searchByIds } from "../store/reads.js";

export interface RetrievalDeps {
  store: CortexStore;
  embedder: Embedder | null;
  policy: () => DimensionPolicy;
  settings: RetrievalSettings;
  usage: UsageTracker;
  metrics: CortexMetrics;
}

/** The second hop is optional: it starts only with this much of the time limit left. */
const hopMinimumMs = 100;

/** Deep mode looks further down every list: at least this many candidates per signal. */
export const deepModeMinCandidates = 100;

export function candidatesPerSignal(mode: RetrieveRequest["mode"], standard: number): number {
  return mode === "deep" ? Math.max(deepModeMinCandidates, standard) : standard;
}

function emptyLists(): SignalLists {
  return { bm25: [], knn: [], facet: [] };
}

export async function retrieve(
  deps: RetrievalDeps,
  request: RetrieveRequest,
  now: Date,
): Promise<RetrieveResponse> {
  const timings: Record<string, number> = {};
  const started = performance.now();
  const mark = (name: string, since: number) => {
    timings[name] = Math.round((performance.now() - since) * 100) / 100;
  };
  const policy = deps.policy();
  const nowIso = now.toISOString();
  const liveState = detectLiveState(request.requestText, request.intent);
  const degradedReasons: string[] = [];
  const gateRequest = {
    principal: request.principal,
    now: nowIso,
    types: request.types,
    minConfidence: request.minConfidence,
    dimensionFilters: request.dimensionFilters,
    modelLocation: request.modelLocation,
    allowPrivateToCloud: request.allowPrivateToCloud,
  };
  const factGate = knowledgeGate(gateRequest, policy);
  const chunksGate = chunkGate(gateRequest, policy);
  const hints = normalizeHints(request.domainHints);

  let vector: number[] | null = null;
  if (deps.embedder === null) degradedReasons.push("no embedding model configured: lexical only");
  else {
    const embedStarted = performance.now();
    try {
      vector = await deps.embedder.embedQuery(request.requestText);
    } catch (error) {
      degradedReasons.push(`embedding unavailable, lexical only: ${describe(error)}`);
      deps.metrics.degradedAnswers.inc({ reason: "embedding" });
    }
    mark("embed", embedStarted);
  }

  const searchPlan = {
    knowledgeIndex: deps.store.indices.knowledge,
    knowledgeVectorIndex: deps.store.indices.vectors,
    chunkIndex: deps.store.indices.chunks,
    requestText: request.requestText,
    knowledgeGate: factGate,
    knowledgeVectorGate: knowledgeVectorGate(gateRequest, policy),
    chunkGate: chunksGate,
    vector,
    hints,
    candidates: candidatesPerSignal(request.mode, deps.settings.candidates),
  };
  const searches = planSearches(searchPlan);
  const factDocs = new Map<string, FactDoc>();
  const chunkDocs = new Map<string, ChunkDoc>();
  const factSignals = emptyLists();
  const chunkSignals = emptyLists();
  // The OpenSearch time limit starts after the query embedding, which has its own limit.
  const searchStarted = performance.now();
  const floor = knnScoreFloor(deps.settings.minVectorSimilarity);
  try {
    const remaining = deps.settings.retrieveTimeoutMs;
    const responses = await multiSearch<StoredKnowledge & StoredChunk>(deps.store, searches, remaining);
    responses.forEach((response, index) => {
      const search = searches[index];
      if (search === undefined) return;
      if (response.error !== undefined) {
        degradedReasons.push(`${search.kind} ${search.signal} search failed: ${response.error.type}`);
        return;
      }
      const hits = response.hits.hits;
      const lists = search.kind === "fact" ? factSignals : chunkSignals;
      (lists as Record<Signal, unknown>)[search.signal] = signalHits(hits, search.signal, floor);
      // Knowledge k-NN hits are vector documents without the object; hydrateKnnFacts fetches those.
      if (search.kind === "fact" && search.signal === "knn") return;
      for (const hit of hits) {
        if (search.kind === "fact") factDocs.set(hit._id, toFactDoc(hit._source));
        else chunkDocs.set(hit._id, toChunkDoc(hit._source));
      }
    });
  } catch (error) {
    deps.metrics.degradedAnswers.inc({ reason: "opensearch" });
    return degradedEmpty(request, liveState, deps.settings.lowConfidenceThreshold, [
      ...degradedReasons,
      `OpenSearch unavailable: ${describe(error)}`,
    ]);
  }
  mark("search", searchStarted);

  /** Documents by id through a gate, within what is left of the time limit; a failure is a degraded reason. */
  const fetchGated = async <S>(
    index: string,
    ids: readonly string[],
    gate: FilterClause[],
    step: string,
    failure: string,
  ): Promise<SearchHit<S>[]> => {
    const stepStarted = performance.now();
    try {
      const remaining = Math.max(50, deps.settings.retrieveTimeoutMs - (performance.now() - searchStarted));
      return await searchByIds<S>(deps.store, index, ids, gate, sourceExcludes, remaining);
    } catch (error) {
      degradedReasons.push(`${failure}: ${describe(error)}`);
      return [];
    } finally {
      mark(step, stepStarted);
    }
  };

  // Knowledge k-NN hits are ids; their objects come through the full gate, which has the last word (a vector
  // whose object fell below the confidence floor is not a candidate). Failing here costs only the vector signal.
  const missing = factSignals.knn.map((hit) => hit.id).filter((id) => !factDocs.has(id));
  if (missing.length > 0) {
    const { knowledge } = deps.store.indices;
    const hits = await fetchGated<StoredKnowledge>(
      knowledge,
      missing,
      factGate,
      "hydrate",
      "fact knn search failed",
    );
    for (const hit of hits) factDocs.set(hit._id, toFactDoc(hit._source));
  }
  factSignals.knn = factSignals.knn.filter((hit) => factDocs.has(hit.id));

  const rankStarted = performance.now();
  const context = {
    weights: policy.retrievalWeights,
    now: rankingClock(now),
    recencyHalfLifeDays: deps.settings.recencyHalfLifeDays,
    hints,
  };
  const rankedFacts = rankCandidates(factSignals, factDocs, context, "fact");
  let rankedChunks = rankCandidates(chunkSignals, chunkDocs, context, "chunk");
  mark("rank", rankStarted);

  // The second hop: a BM25 search for chunks, through the same gate, for the names the best items carry and the
  // question lacks; its hits join the chunks' ranking as a list of their own. Failing costs only this list.
  const terms =
    context.weights.chunkHop > 0 && chunksGate !== null
      ? hopTerms(request.requestText, [
          ...rankedChunks.slice(0, hopSourceItems).map((candidate) => candidate.doc.text),
          ...rankedFacts.slice(0, hopSourceItems).map((candidate) => candidate.doc.statement),
        ])
      : [];
  const hopRemaining = deps.settings.retrieveTimeoutMs - (performance.now() - searchStarted);
  if (terms.length > 0 && hopRemaining < hopMinimumMs)
    degradedReasons.push("second hop skipped: the time limit is nearly spent");
  else if (terms.length > 0) {
    const hopStarted = performance.now();
    const hopSearches = planSearches({
      ...searchPlan,
      requestText: terms.join(" "),
      vector: null,
      hints: [],
      candidates: hopCandidates,
    }).filter((search) => search.kind === "chunk");
    try {
      const [response] = await multiSearch<StoredChunk>(deps.store, hopSearches, hopRemaining);
      if (response?.error !== undefined) degradedReasons.push(`second hop skipped: ${response.error.type}`);
      else if (response !== undefined) {
        // A BM25 search: the k-NN floor does not apply.
        chunkSignals.hop = signalHits(response.hits.hits, "bm25", floor);
        for (const hit of response.hits.hits)
          chunkDocs.set(hit._id, chunkDocs.get(hit._id) ?? toChunkDoc(hit._source));
        rankedChunks = rankCandidates(chunkSignals, chunkDocs, context, "chunk");
      }
    } catch (error) {
      degradedReasons.push(`second hop skipped: ${describe(error)}`);
    }
    mark("hop", hopStarted);
  }

  const neighbours = new Map<string, ChunkDoc>();
  const expansion = expansionCandidates(rankedChunks, request.mode);
  if (expansion.length > 0 && chunksGate !== null) {
    const { chunks } = deps.store.indices;
    const hits = await fetchGated<StoredChunk>(
      chunks,
      expansion,
      chunksGate,
      "expand",
      "adjacency expansion skipped",
    );
    for (const hit of hits) neighbours.set(hit._id, toChunkDoc(hit._source));
  }

  const assembleStarted = performance.now();
  const bundle = assembleBundle({
    facts: rankedFacts,
    chunks: rankedChunks,
    neighbours,
    tokenBudget: request.tokenBudget,
    mode: request.mode,
    liveState: liveState.detected,
    countTokens: slicedTokenCount(countTokens),
    lowConfidenceThreshold: deps.settings.lowConfidenceThreshold,
  });
  mark("assemble", assembleStarted);
  mark("total", started);

  deps.usage.record(
    deps.store.indices.knowledge,
    bundle.facts.map((fact) => fact.doc.id),
  );
  deps.usage.record(
    deps.store.indices.chunks,
    bundle.chunks.map((chunk) => chunk.doc.id),
  );
  const candidatesConsidered = rankedFacts.length + rankedChunks.length;
  deps.metrics.bundleTokens.observe(bundle.tokens);
  deps.metrics.candidatesConsidered.observe(candidatesConsidered);

  const response: RetrieveResponse = {
    bundle: {
      text: bundle.text,
      tokens: bundle.tokens,
      tokenBudget: request.tokenBudget,
      sections: bundle.sections,
    },
    facts: bundle.facts.map(({ doc, score }) => ({
      id: doc.id,
      scope: doc.scope,
      privacy: doc.privacy,
      statement: doc.statement,
      type: doc.type,
      confidence: doc.confidence,
      score,
      dimensions: doc.dimensions,
    })),
    chunks: bundle.chunks.map(({ doc, score, expandedFrom }) => ({
      id: doc.id,
      scope: doc.scope,
      privacy: doc.privacy,
      level: doc.level,
      sourceId: doc.sourceId,
      sourceKind: doc.sourceKind,
      text: doc.text,
      score,
      expandedFrom,
      documentHash: documentHashOf(doc),
    })),
    artifactRefs: bundle.artifactRefs,
    aggregateConfidence: bundle.aggregateConfidence,
    lowConfidence: bundle.lowConfidence,
    degraded: degradedReasons.length > 0,
    degradedReasons,
    liveState,
    candidatesConsidered,
  };
  if (request.debug) {
    const selected = new Set([
      ...bundle.facts.map((fact) => fact.doc.id),
      ...bundle.chunks.map((chunk) => chunk.doc.id),
    ]);
    const traceOf =
      (kind: "fact" | "chunk") =>
      (candidate: RankedCandidate<FactDoc | ChunkDoc>): TraceItem => ({
        id: candidate.doc.id,
        kind,
        bm25Rank: candidate.bm25Rank,
        bm25Score: candidate.bm25Score,
        knnRank: candidate.knnRank,
        knnScore: candidate.knnScore,
        facetRank: candidate.facetRank,
        hopRank: candidate.hopRank,
        fused: candidate.fused,
        features: candidate.features,
        score: candidate.score,
        selected: selected.has(candidate.doc.id),
        excludedBecause: selected.has(candidate.doc.id)
          ? null
          : (bundle.exclusions.get(candidate.doc.id) ?? "rank_cutoff"),
      });
    response.trace = {
      policyFilterClauses: factGate.length,
      fusion: `weighted reciprocal rank fusion (k=${rrfK}) × rank-feature multiplier; ties by id`,
      items: [...rankedFacts.map(traceOf("fact")), ...rankedChunks.map(traceOf("chunk"))],
      timingsMs: timings,
    };
  }
  if (response.degraded) deps.metrics.degradedAnswers.inc({ reason: "partial" });
  return response;
}

/** No memory at all; a live-state question still gets the instruction to check live state (if it fits). */
function degradedEmpty(
  request: RetrieveRequest,
  liveState: RetrieveResponse["liveState"],
  lowConfidenceThreshold: number,
  degradedReasons: string[],
): RetrieveResponse {
  const { text, tokens } = assembleBundle({
    facts: [],
    chunks: [],
    neighbours: new Map(),
    tokenBudget: request.tokenBudget,
    mode: request.mode,
    liveState: liveState.detected,
    countTokens: slicedTokenCount(countTokens),
    lowConfidenceThreshold,
  });
  return {
    bundle: { text, tokens, tokenBudget: request.tokenBudget, sections: [] },
    facts: [],
    chunks: [],
    artifactRefs: [],
    aggregateConfidence: 0,
    lowConfidence: true,
    degraded: true,
    degradedReasons,
    liveState,
    candidatesConsidered: 0,
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
