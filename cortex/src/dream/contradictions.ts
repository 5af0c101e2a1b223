import { createHash } from "node:crypto";
import { isLive, type MaturingObject, normaliseClaimPart, sameScope, scopeKey } from "../core/knowledge.js";
import { compareClaims } from "../core/match.js";
import { areOpposites, defaultOppositeOverlap } from "../core/polarity.js";

/**
 * Contradiction detection and resolution by evidence (seed 000 §5.7). Detection is deterministic: claim
 * conflicts by structure, semantic opposites by embedding neighbourhood plus negation polarity. Nothing is
 * deleted; a loser's validity ends and it is linked to the winner, and what evidence cannot decide goes to a
 * person as a review item.
 */

/** Two objects whose embeddings are near each other, with their cosine similarity (from k-NN). */
export interface SimilarPair {
  aId: string;
  bId: string;
  similarity: number;
  /**
   * Found by a lookup this cycle. An incremental cycle examines it even when neither object changed since the
   * last cycle: the pair did not exist for that cycle (its object had no neighbour list yet).
   */
  fresh?: boolean | undefined;
}

export interface Contradiction {
  kind: "claim" | "opposite";
  /** The two object ids, sorted. */
  ids: readonly [string, string];
}

export interface ContradictionOptions {
  /** Only near neighbours at or above this cosine are checked for opposite polarity. */
  oppositeSimilarity: number;
  /** Share of content words two statements must have in common to count as the same statement. */
  oppositeOverlap: number;
  multiValuedPredicates: readonly string[];
  /**
   * The newer object wins when its confidence is at least the older one's minus this margin: a newer statement
   * may be somewhat less established, not much less. Outside the margin the pair goes to review.
   */
  recencyMargin: number;
}

/**
 * Predicates that hold many objects at once: (alice, likes, jazz) and (alice, likes, blues) are both true, and an
 * invalidation between them would lose knowledge. Compared after normalisation (case, whitespace).
 */
export const defaultMultiValuedPredicates: readonly string[] = [
  "likes",
  "loves",
  "enjoys",
  "dislikes",
  "hates",
  "has",
  "owns",
  "knows",
  "speaks",
  "uses",
  "plays",
  "visited",
  "is allergic to",
  "is friends with",
];

export const defaultContradictionOptions: ContradictionOptions = {
  oppositeSimilarity: 0.8,
  oppositeOverlap: defaultOppositeOverlap,
  multiValuedPredicates: defaultMultiValuedPredicates,
  recencyMargin: 0.25,
};

function pairIds(a: string, b: string): readonly [string, string] {
  return a < b ? [a, b] : [b, a];
}

/**
 * Contradictions among live objects: claims with the same subject and a single-valued predicate but another object;
 * claims with the same subject and object whose predicates are opposites ("likes" / "does not like", "is allowed"
 * / "is forbidden"); near neighbours whose statements are opposites. With `changedSince`, only pairs in which at least one object changed
 * after that time, or that are fresh, are reported (dream's incremental pass); the others were settled by an
 * earlier cycle.
 */
export function detectContradictions(
  objects: readonly MaturingObject[],
  pairs: readonly SimilarPair[],
  changedSince: string | undefined,
  options: ContradictionOptions = defaultContradictionOptions,
): Contradiction[] {
  const live = objects.filter(isLive);
  const byId = new Map(live.map((o) => [o.id, o]));
  const changed = (o: MaturingObject): boolean => changedSince === undefined || o.updatedAt > changedSince;
  const found = new Map<string, Contradiction>();

  const groups = new Map<string, MaturingObject[]>();
  for (const object of live) {
    if (!object.claim) continue;
    const key = `${scopeKey(object.scope)}|${normaliseClaimPart(object.claim.subject)}|${normaliseClaimPart(object.claim.predicate)}`;
    const group = groups.get(key);
    if (group) group.push(object);
    else groups.set(key, [object]);
  }
  for (const group of groups.values()) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const a = group[i] as MaturingObject;
        const b = group[j] as MaturingObject;
        if (!a.claim || !b.claim || (!changed(a) && !changed(b))) continue;
        if (compareClaims(a.claim, b.claim, options.multiValuedPredicates) !== "conflicting") continue;
        const ids = pairIds(a.id, b.id);
        found.set(ids.join("|"), { kind: "claim", ids });
      }
    }
  }

  const byObject = new Map<string, MaturingObject[]>();
  for (const object of live) {
    if (!object.claim) continue;
    const key = `${scopeKey(object.scope)}|${normaliseClaimPart(object.claim.subject)}|${normaliseClaimPart(object.claim.object)}`;
    const group = byObject.get(key);
    if (group) group.push(object);
    else byObject.set(key, [object]);
  }
  for (const group of byObject.values()) {
    for (let i = 0; i < group.length; i++) {
      for (let j = i + 1; j < group.length; j++) {
        const a = group[i] as MaturingObject;
        const b = group[j] as MaturingObject;
        if (!a.claim || !b.claim || (!changed(a) && !changed(b))) continue;
        if (!areOpposites(a.claim.predicate, b.claim.predicate, options.oppositeOverlap)) continue;
        const ids = pairIds(a.id, b.id);
        found.set(ids.join("|"), { kind: "claim", ids });
      }
    }
  }

  for (const pair of pairs) {
    if (pair.similarity < options.oppositeSimilarity) continue;
    const a = byId.get(pair.aId);
    const b = byId.get(pair.bId);
    if (!a || !b || a.id === b.id || a.type !== b.type || !sameScope(a.scope, b.scope)) continue;
    if (!changed(a) && !changed(b) && !pair.fresh) continue;
    const ids = pairIds(a.id, b.id);
    if (found.has(ids.join("|"))) continue;
    if (areOpposites(a.statement, b.statement, options.oppositeOverlap))
      found.set(ids.join("|"), { kind: "opposite", ids });
  }
  return [...found.values()].sort((x, y) => (x.ids.join("|") < y.ids.join("|") ? -1 : 1));
}

export type Resolution =
  | { outcome: "resolved"; winnerId: string; loserId: string; reason: string }
  | { outcome: "review"; reason: string };

/**
 * Resolution by evidence: the newer assertion (lastReinforcedAt) wins if it is also strong enough — its
 * confidence at least the older one's minus `recencyMargin`. Undecidable, and sent to review: assertions at the
 * same instant, a newer one much weaker than a well-established older one, and any pair where the older object
 * was already promoted into a reviewed artifact (overturning it silently would leave the artifact stale).
 */
export function resolveContradiction(
  a: MaturingObject,
  b: MaturingObject,
  options: ContradictionOptions = defaultContradictionOptions,
): Resolution {
  if (a.lastReinforcedAt === b.lastReinforcedAt) {
    return { outcome: "review", reason: "both were last asserted at the same time" };
  }
  const [older, newer] = a.lastReinforcedAt < b.lastReinforcedAt ? [a, b] : [b, a];
  if (older.promotion === "promoted") {
    return { outcome: "review", reason: `${older.id} is in a promoted artifact; a person decides` };
  }
  if (newer.confidence >= older.confidence - options.recencyMargin) {
    return {
      outcome: "resolved",
      winnerId: newer.id,
      loserId: older.id,
      reason: `newer (${newer.lastReinforcedAt}) and confidence ${newer.confidence.toFixed(2)} within ${options.recencyMargin} of ${older.confidence.toFixed(2)}`,
    };
  }
  return {
    outcome: "review",
    reason: `newer ${newer.id} (${newer.confidence.toFixed(2)}) is much weaker than older ${older.id} (${older.confidence.toFixed(2)})`,
  };
}

export interface ReviewItem {
  id: string;
  kind: "contradiction";
  objectIds: readonly string[];
  reason: string;
}

/** Review ids are derived from the objects, so the same open question is one review item across cycles. */
export function reviewItemId(objectIds: readonly string[]): string {
  const digest = createHash("sha256")
    .update([...objectIds].sort().join("\n"))
    .digest("hex");
  return `review-${digest.slice(0, 16)}`;
}
