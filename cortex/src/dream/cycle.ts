import { type DreamCountName, dreamCountNames } from "@remram/contract";
import { applyConfidenceEvent } from "../core/confidence.js";
import { addLink, isLive, type MaturingObject } from "../core/knowledge.js";
import { invalidate } from "../core/lifecycle.js";
import {
  defaultPromotionCriteria,
  generateProposals,
  type PromotionCriteria,
  type ProposalDraft,
} from "../core/proposal.js";
import {
  type ContradictionOptions,
  defaultContradictionOptions,
  detectContradictions,
  type ReviewItem,
  resolveContradiction,
  reviewItemId,
  type SimilarPair,
} from "./contradictions.js";
import { type DecayOptions, defaultDecayOptions, sweepDecay } from "./decay.js";
import {
  type CandidateDimensionStats,
  type CandidatePromotionPolicy,
  type DimensionPromotion,
  defaultCandidatePromotionPolicy,
  selectDimensionPromotions,
} from "./dimensions.js";
import { defaultMergeOptions, type Merge, type MergeOptions, mergeDuplicates } from "./merges.js";
import {
  consolidatePrinciples,
  defaultPrincipleOptions,
  findPatterns,
  type Pattern,
  type PrincipleOptions,
  principleDrafts,
} from "./principles.js";
import type { PrincipleDraft } from "./wording.js";

/**
 * One dream cycle as a pure plan (seed 000 §4.8, §5.7): contradictions, near-duplicate merges, survival,
 * principles, decay and demotion, dimension promotions, proposals — in that order, each step seeing the previous
 * one's writes. It runs in two stages around the one call out: `beginDreamCycle` plans up to the principles and
 * says which new ones need a wording; the shell asks the reflection model; `finishDreamCycle` takes the wordings
 * and plans the rest. The shell loads the inputs, applies the plan and stores the report.
 */

export interface DreamOptions {
  contradictions: ContradictionOptions;
  merges: MergeOptions;
  decay: DecayOptions;
  principles: PrincipleOptions;
  dimensionPolicy: CandidatePromotionPolicy;
  promotion: PromotionCriteria;
  artifactsDir: string;
  maxProposals: number;
}

export const defaultDreamOptions: DreamOptions = {
  contradictions: defaultContradictionOptions,
  merges: {
    ...defaultMergeOptions,
    multiValuedPredicates: defaultContradictionOptions.multiValuedPredicates,
  },
  decay: defaultDecayOptions,
  principles: defaultPrincipleOptions,
  dimensionPolicy: defaultCandidatePromotionPolicy,
  promotion: defaultPromotionCriteria,
  artifactsDir: "artifacts",
  maxProposals: 10,
};

export interface DreamInput {
  cycleId: string;
  now: string;
  /**
   * When the previous cycle started (its writes carry that time); undefined when there was none. Objects updated
   * after it are "changed"; reflection writes made while that cycle ran count as changed too.
   */
  changedSince?: string | undefined;
  /**
   * Compare every pair, not only pairs touching a changed object (a full cycle). Survival is credited to changed
   * objects either way: an object survives a cycle once per change, so full cycles do not inflate confidence.
   */
  compareAll?: boolean | undefined;
  /** Live objects (demoted and invalidated ones may be left out: every rule here acts on live objects only). */
  objects: readonly MaturingObject[];
  /** Near-neighbour pairs with cosine similarity: the neighbour graph (neighbours.ts). */
  pairs: readonly SimilarPair[];
  /** What the shell did to the neighbour graph this cycle, for the report. */
  neighbourGraph?: { built: number; pending: number; vectorsBackfilled: number } | undefined;
  candidateDimensions: readonly CandidateDimensionStats[];
  canonicalDimensions: readonly string[];
  /** Current artifact files under the artifacts folder, by workspace-relative path. */
  artifacts: ReadonlyMap<string, string>;
  /**
   * Governance of each object (privacy and consent, as one key): only objects with equal keys merge. Objects
   * missing here share the empty key.
   */
  governance?: ReadonlyMap<string, string> | undefined;
  /** The reflection model's wording for new principles, by principle id (planDreamCycle's one-stage form). */
  principleWording?: ReadonlyMap<string, string>;
}

export type DreamCounts = Record<DreamCountName, number>;

export interface DreamPlan {
  /** Every object the cycle changed or created, in its new state, sorted by id. */
  writes: MaturingObject[];
  reviewItems: ReviewItem[];
  dimensionPromotions: DimensionPromotion[];
  proposals: ProposalDraft[];
  merges: Merge[];
  /** New principles left for a later cycle, with why. */
  deferredPrinciples: { principleId: string; reason: string }[];
  counts: DreamCounts;
}

/** The plan up to the principles step: the state so far and the principles that need a wording. */
export interface DreamStage {
  input: DreamInput;
  options: DreamOptions;
  state: Map<string, MaturingObject>;
  written: Set<string>;
  counts: DreamCounts;
  reviewItems: ReviewItem[];
  merges: Merge[];
  patterns: Pattern[];
  /** What the reflection model is asked to word, by principle id. */
  drafts: PrincipleDraft[];
}

/** Both stages at once, with the wordings the input carries (tests, the benchmark, a dry run). */
export function planDreamCycle(input: DreamInput, options: DreamOptions = defaultDreamOptions): DreamPlan {
  return finishDreamCycle(beginDreamCycle(input, options), input.principleWording ?? new Map());
}

export function beginDreamCycle(input: DreamInput, options: DreamOptions = defaultDreamOptions): DreamStage {
  const { now } = input;
  const state = new Map(input.objects.map((o) => [o.id, o]));
  const written = new Set<string>();
  const put = (object: MaturingObject): void => {
    state.set(object.id, object);
    written.add(object.id);
  };
  const get = (id: string): MaturingObject | undefined => state.get(id);
  const changed = input.objects.filter(
    (o) => input.changedSince === undefined || o.updatedAt > input.changedSince,
  );
  const counts: DreamCounts = Object.fromEntries(dreamCountNames.map((n) => [n, 0])) as DreamCounts;
  counts.objectsScanned = input.objects.length;
  counts.changedObjects = changed.length;
  counts.neighbourListsBuilt = input.neighbourGraph?.built ?? 0;
  counts.neighbourListsPending = input.neighbourGraph?.pending ?? 0;
  counts.vectorsBackfilled = input.neighbourGraph?.vectorsBackfilled ?? 0;

  // 1. Contradictions: the newer, strong-enough side wins; the loser is invalidated and linked, never deleted.
  const contradictions = detectContradictions(
    input.objects,
    input.pairs,
    input.compareAll ? undefined : input.changedSince,
    options.contradictions,
  );
  counts.contradictionsDetected = contradictions.length;
  const reviewItems: ReviewItem[] = [];
  const contested = new Set<string>();
  for (const contradiction of contradictions) {
    const [a, b] = contradiction.ids.map(get);
    if (!a || !b) continue;
    for (const id of contradiction.ids) contested.add(id);
    if (!isLive(a) || !isLive(b)) continue; // an earlier pair in this cycle already settled one of them
    const resolution = resolveContradiction(a, b, options.contradictions);
    if (resolution.outcome === "review") {
      reviewItems.push({
        id: reviewItemId(contradiction.ids),
        kind: "contradiction",
        objectIds: contradiction.ids,
        reason: `${contradiction.kind}: ${resolution.reason}`,
      });
      continue;
    }
    const winner = get(resolution.winnerId) as MaturingObject;
    const loser = invalidate(get(resolution.loserId) as MaturingObject, now, options.decay.confidence);
    put({ ...loser, links: addLink(loser.links, { relation: "supersededBy", targetId: winner.id }) });
    put({
      ...winner,
      links: addLink(winner.links, { relation: "supersedes", targetId: loser.id }),
      updatedAt: now,
    });
    counts.contradictionsResolved += 1;
    counts.invalidated += 1;
  }
  counts.reviewItems = reviewItems.length;

  // 2. Near-duplicates merge into one survivor that keeps the provenance of all; the others are invalidated.
  const merged = mergeDuplicates(
    [...state.values()],
    input.pairs,
    now,
    input.compareAll ? undefined : input.changedSince,
    input.governance,
    options.merges,
  );
  for (const object of merged.changed) put(object);
  counts.duplicatesMerged = merged.merges.reduce((sum, m) => sum + m.mergedIds.length, 0);
  counts.invalidated += counts.duplicatesMerged;

  // 3. Changed objects this cycle examined and found uncontradicted gain a little confidence.
  for (const object of changed) {
    const current = get(object.id) as MaturingObject;
    if (!isLive(current) || contested.has(object.id)) continue;
    const confidence = applyConfidenceEvent(
      current.confidence,
      { kind: "survivedDream" },
      options.decay.confidence,
    );
    put({ ...current, confidence, updatedAt: now });
    counts.survived += 1;
  }

  // The patterns the principles step acts on; the new ones' drafts go to the reflection model between stages.
  const patterns = findPatterns([...state.values()], input.pairs, options.principles);
  return {
    input,
    options,
    state,
    written,
    counts,
    reviewItems,
    merges: merged.merges,
    patterns,
    drafts: principleDrafts(patterns),
  };
}

/**
 * The rest of the cycle, given the reflection model's wordings by principle id and, for the drafts left without
 * one, why (`deferred`; the reason defaults to "no wording").
 */
export function finishDreamCycle(
  stage: DreamStage,
  wordings: ReadonlyMap<string, string>,
  deferred: ReadonlyMap<string, string> = new Map(),
): DreamPlan {
  const { input, options, reviewItems } = stage;
  const { now } = input;
  // Copies, so the stage can be finished again (a retry with other wordings) and stays plain input.
  const state = new Map(stage.state);
  const written = new Set(stage.written);
  const counts = { ...stage.counts };
  const put = (object: MaturingObject): void => {
    state.set(object.id, object);
    written.add(object.id);
  };
  const get = (id: string): MaturingObject | undefined => state.get(id);

  // 4. Principles from recurring patterns, with evidence links both ways. Before decay, so a principle
  //    whose evidence was just reinforced is refreshed before the sweep looks at it.
  const consolidation = consolidatePrinciples(
    [...state.values()],
    input.pairs,
    now,
    options.principles,
    wordings,
    stage.patterns,
  );
  for (const object of [...consolidation.principles, ...consolidation.evidence]) {
    const current = get(object.id);
    put(current ? { ...object, links: mergeLinks(current, object) } : object);
  }
  counts.principlesCreated = consolidation.created;
  counts.principlesReinforced = consolidation.reinforced;
  counts.principlesDeferred = consolidation.deferred.length;
  const deferredPrinciples = consolidation.deferred.map((principleId) => ({
    principleId,
    reason: deferred.get(principleId) ?? "no wording",
  }));

  // 5. Decay sweep over everything idle past the grace period; demotion below the threshold.
  for (const object of [...state.values()]) {
    const outcome = sweepDecay(object, now, options.decay);
    if (!outcome.decayed && !outcome.demoted) continue;
    put(outcome.object);
    if (outcome.decayed) counts.decayed += 1;
    if (outcome.demoted) counts.demoted += 1;
  }

  // 6. Candidate dimensions that pass the DimensionPolicy thresholds.
  const dimensionPromotions = selectDimensionPromotions(
    input.candidateDimensions,
    input.canonicalDimensions,
    options.dimensionPolicy,
  );
  counts.dimensionsPromoted = dimensionPromotions.length;

  // 7. Proposals for artifacts whose qualifying entries changed; their new entries become "proposed".
  const proposals = generateProposals([...state.values()], input.artifacts, {
    artifactsDir: options.artifactsDir,
    maxProposals: options.maxProposals,
    criteria: options.promotion,
  });
  for (const proposal of proposals) {
    for (const id of proposal.sourceKnowledgeIds) {
      const object = get(id);
      if (object && object.promotion === "none") put({ ...object, promotion: "proposed", updatedAt: now });
    }
  }
  counts.proposalsGenerated = proposals.length;

  const writes = [...written].sort().map((id) => state.get(id) as MaturingObject);
  return {
    writes,
    reviewItems,
    dimensionPromotions,
    proposals,
    merges: stage.merges,
    deferredPrinciples,
    counts,
  };
}

/** Consolidation works on a snapshot; keep links earlier steps of this cycle added to the same object. */
function mergeLinks(current: MaturingObject, next: MaturingObject): MaturingObject["links"] {
  return next.links.reduce((links, link) => addLink(links, link), current.links);
}

/** What `GET /dream/{cycleId}` returns. */
export interface DreamReport {
  cycleId: string;
  mode: "full" | "incremental";
  startedAt: string;
  finishedAt: string;
  counts: DreamCounts;
  reviewItems: ReviewItem[];
  dimensionPromotions: DimensionPromotion[];
  proposalIds: string[];
  /** Merges of this cycle (at most `reportListLimit`; the counts have them all). */
  merges: Merge[];
  deferredPrinciples: { principleId: string; reason: string }[];
  /** Milliseconds per phase (load, neighbours, plan, wording, write), measured by the shell. */
  timingsMs?: Record<string, number> | undefined;
}

/**
 * The report of a planned (and, unless a dry run, applied) cycle. `writeConflicts`: planned updates skipped
 * because reflection wrote the object while the cycle ran; the next cycle sees those objects as changed.
 */
export function dreamReport(
  input: DreamInput,
  plan: DreamPlan,
  finishedAt: string,
  applied: { writeConflicts: number },
): DreamReport {
  return {
    cycleId: input.cycleId,
    mode: input.changedSince === undefined || input.compareAll ? "full" : "incremental",
    startedAt: input.now,
    finishedAt,
    counts: { ...plan.counts, writeConflicts: applied.writeConflicts },
    reviewItems: plan.reviewItems,
    dimensionPromotions: plan.dimensionPromotions,
    proposalIds: plan.proposals.map((p) => p.id),
    merges: plan.merges.slice(0, reportListLimit),
    deferredPrinciples: plan.deferredPrinciples.slice(0, reportListLimit),
  };
}

/** Lists in a report stop here: a first cycle over an import may merge thousands; the counts are exact. */
export const reportListLimit = 100;
