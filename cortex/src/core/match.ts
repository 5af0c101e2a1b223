import {
  type Claim,
  type KnowledgeType,
  type MaturingObject,
  normaliseClaimPart,
  type Scope,
  sameScope,
} from "./knowledge.js";
import { areOpposites } from "./polarity.js";

/**
 * Matching a reflected statement against what is already stored, so reflection reinforces instead of
 * duplicating (the duplicate complaint in the peers' trackers). Candidates come from the store: objects with
 * the same claim subject and predicate, and nearest neighbours by embedding, each with its cosine similarity.
 */

export interface Neighbour {
  object: MaturingObject;
  /** Cosine similarity of the embeddings; absent when the candidate came only from the claim lookup. */
  similarity?: number | undefined;
}

export interface MatchThresholds {
  /** At or above this cosine two statements of one type and scope say the same thing. */
  duplicateSimilarity: number;
  /** At or above this cosine they are linked as related. */
  relatedSimilarity: number;
  /** A correction without id or claim invalidates its nearest neighbour only at or above this cosine. */
  correctionSimilarity: number;
  /** Most related links one new object gets. */
  maxRelatedLinks: number;
  /** Predicates that may hold several objects at once ("likes"); conflicting objects are no conflict there. */
  multiValuedPredicates: readonly string[];
}

export const defaultMatchThresholds: MatchThresholds = {
  duplicateSimilarity: 0.9,
  relatedSimilarity: 0.75,
  correctionSimilarity: 0.85,
  maxRelatedLinks: 5,
  multiValuedPredicates: [],
};

export type ClaimRelation = "same" | "conflicting" | "unrelated";

/** Claims relate by subject and predicate; a single-valued predicate with another object is a conflict. */
export function compareClaims(
  a: Claim,
  b: Claim,
  multiValuedPredicates: readonly string[] = [],
): ClaimRelation {
  const predicate = normaliseClaimPart(a.predicate);
  if (normaliseClaimPart(a.subject) !== normaliseClaimPart(b.subject)) return "unrelated";
  if (predicate !== normaliseClaimPart(b.predicate)) return "unrelated";
  if (normaliseClaimPart(a.object) === normaliseClaimPart(b.object)) return "same";
  const multiValued = multiValuedPredicates.some((p) => normaliseClaimPart(p) === predicate);
  return multiValued ? "unrelated" : "conflicting";
}

/** Reflection may reinforce or link to objects that are not invalidated; a demoted one is revived by reinforcement. */
function isMatchable(object: MaturingObject): boolean {
  return object.state !== "invalidated" && object.invalidAt === undefined;
}

export type ItemMatch =
  | { action: "reinforce"; target: MaturingObject; by: "claim" | "semantic" }
  | { action: "create"; relatedIds: string[]; conflictingIds: string[] };

interface Candidate {
  type: KnowledgeType;
  statement: string;
  claim?: Claim | undefined;
  scope: Scope;
}

function bySimilarityThenId(a: Neighbour, b: Neighbour): number {
  return (b.similarity ?? 0) - (a.similarity ?? 0) || (a.object.id < b.object.id ? -1 : 1);
}

/**
 * Decide whether a reflected item reinforces an existing object or becomes a new one:
 * 1. same type, same scope, and the same claim → reinforce (claim match);
 * 2. same type, same scope, cosine ≥ duplicateSimilarity, no conflicting claim and not its opposite
 *    ("likes jazz" / "does not like jazz" sit at cosine 0.91) → reinforce (semantic);
 * 3. otherwise create, linked as related to neighbours with cosine ≥ relatedSimilarity, and marked as
 *    conflicting with objects whose claim conflicts or that say the opposite (dream resolves those; reflection
 *    stays additive).
 * Only neighbours in the item's own scope are considered, so nothing links across scopes.
 */
export function matchDeltaItem(
  item: Candidate,
  neighbours: readonly Neighbour[],
  thresholds: MatchThresholds = defaultMatchThresholds,
): ItemMatch {
  const inScope = neighbours.filter((n) => isMatchable(n.object) && sameScope(n.object.scope, item.scope));
  const claimRelation = (n: Neighbour): ClaimRelation =>
    item.claim && n.object.claim
      ? compareClaims(item.claim, n.object.claim, thresholds.multiValuedPredicates)
      : "unrelated";
  const relation = (n: Neighbour): ClaimRelation => {
    const byClaim = claimRelation(n);
    if (byClaim !== "unrelated") return byClaim;
    const near = (n.similarity ?? 0) >= thresholds.relatedSimilarity;
    return near && areOpposites(item.statement, n.object.statement) ? "conflicting" : "unrelated";
  };

  const claimMatches = inScope
    .filter((n) => n.object.type === item.type && relation(n) === "same")
    .sort((a, b) => b.object.confidence - a.object.confidence || (a.object.id < b.object.id ? -1 : 1));
  const claimMatch = claimMatches[0];
  if (claimMatch) return { action: "reinforce", target: claimMatch.object, by: "claim" };

  const semanticMatch = inScope
    .filter(
      (n) =>
        n.object.type === item.type &&
        relation(n) !== "conflicting" &&
        (n.similarity ?? 0) >= thresholds.duplicateSimilarity,
    )
    .sort(bySimilarityThenId)[0];
  if (semanticMatch) return { action: "reinforce", target: semanticMatch.object, by: "semantic" };

  const conflictingIds = inScope
    .filter((n) => relation(n) === "conflicting")
    .map((n) => n.object.id)
    .sort();
  const relatedIds = inScope
    .filter((n) => relation(n) !== "conflicting" && (n.similarity ?? 0) >= thresholds.relatedSimilarity)
    .sort(bySimilarityThenId)
    .slice(0, thresholds.maxRelatedLinks)
    .map((n) => n.object.id);
  return { action: "create", relatedIds, conflictingIds };
}

interface CorrectionQuery {
  targetId?: string | undefined;
  claim?: { subject: string; predicate: string; object?: string | undefined } | undefined;
  scope: Scope;
}

/**
 * The objects a user correction invalidates: the named target; else every matchable object in scope whose
 * claim has the same subject and predicate (and object, when given); else the nearest neighbour at or above
 * correctionSimilarity. An empty answer means nothing matched and nothing is invalidated.
 */
export function findCorrectionTargets(
  correction: CorrectionQuery,
  neighbours: readonly Neighbour[],
  thresholds: MatchThresholds = defaultMatchThresholds,
): MaturingObject[] {
  const inScope = neighbours.filter(
    (n) => isMatchable(n.object) && sameScope(n.object.scope, correction.scope),
  );
  if (correction.targetId !== undefined) {
    return neighbours
      .filter((n) => isMatchable(n.object) && n.object.id === correction.targetId)
      .map((n) => n.object);
  }
  const claim = correction.claim;
  if (claim) {
    const matches = inScope.filter((n) => {
      const other = n.object.claim;
      if (!other) return false;
      return (
        normaliseClaimPart(other.subject) === normaliseClaimPart(claim.subject) &&
        normaliseClaimPart(other.predicate) === normaliseClaimPart(claim.predicate) &&
        (claim.object === undefined || normaliseClaimPart(other.object) === normaliseClaimPart(claim.object))
      );
    });
    if (matches.length > 0) return matches.map((n) => n.object).sort((a, b) => (a.id < b.id ? -1 : 1));
  }
  const nearest = inScope
    .filter((n) => (n.similarity ?? 0) >= thresholds.correctionSimilarity)
    .sort(bySimilarityThenId)[0];
  return nearest ? [nearest.object] : [];
}
