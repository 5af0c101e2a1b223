import { createHash } from "node:crypto";
import { applyConfidenceEvent, defaultConfidenceConstants } from "../core/confidence.js";
import {
  addLink,
  isLive,
  type MaturingObject,
  normaliseClaimPart,
  sameScope,
  scopeKey,
  sortedUnion,
} from "../core/knowledge.js";
import type { SimilarPair } from "./contradictions.js";
import type { PrincipleDraft } from "./wording.js";

/**
 * Principle consolidation (seed 000 §5.7): a stable pattern that recurs across sessions becomes a principle
 * object linked to its evidence. Only dream creates principles. A pattern is a cluster of live, same-scope,
 * non-principle objects joined by a shared claim or by embedding similarity; it qualifies when it was asserted
 * in enough distinct sessions, often enough and confidently enough.
 */

export interface PrincipleOptions {
  /** Objects at or above this cosine join one cluster. */
  clusterSimilarity: number;
  /** Distinct sessions that must have asserted the pattern: recurrence, not one long conversation. */
  minSessions: number;
  /** Assertions across the cluster (sum of reinforcement counts). */
  minAssertions: number;
  /** Mean confidence of the cluster's members. */
  minConfidence: number;
  /**
   * Larger clusters are a topic, not a principle, and are left alone; 64 is also the most evidence links a
   * stored object holds.
   */
  maxClusterSize: number;
  /**
   * A new principle needs a wording (the reflection model's): without one it is deferred to the next cycle, and
   * nothing of it is written. Off, it takes its strongest member's statement (Cortex without a reflection model).
   */
  requireWording: boolean;
}

export const defaultPrincipleOptions: PrincipleOptions = {
  clusterSimilarity: 0.8,
  minSessions: 3,
  minAssertions: 3,
  minConfidence: 0.6,
  maxClusterSize: 64,
  requireWording: false,
};

export interface Consolidation {
  /** New principles and reinforced existing ones, with evidence links. */
  principles: MaturingObject[];
  /** Evidence objects that gained an evidenceFor link. */
  evidence: MaturingObject[];
  created: number;
  reinforced: number;
  /** Ids of new principles left for a later cycle: their wording was required and is missing. */
  deferred: string[];
}

/** A qualifying cluster, and the principle that already draws evidence from it, if any. */
export interface Pattern {
  cluster: MaturingObject[];
  prior: MaturingObject | undefined;
  /** Members the principle does not list as evidence yet (all of them for a new principle). */
  newEvidence: string[];
  /** The newest assertion among the members. */
  freshest: string;
}

/** Connected components over "same claim" and "similar enough" edges, within one scope. */
export function clusterPatterns(
  objects: readonly MaturingObject[],
  pairs: readonly SimilarPair[],
  clusterSimilarity: number,
): MaturingObject[][] {
  const members = objects.filter((o) => isLive(o) && o.type !== "principle");
  const byId = new Map(members.map((o) => [o.id, o]));
  const parent = new Map(members.map((o) => [o.id, o.id]));
  const root = (id: string): string => {
    let current = id;
    while (parent.get(current) !== current) current = parent.get(current) as string;
    parent.set(id, current);
    return current;
  };
  const join = (a: MaturingObject, b: MaturingObject): void => {
    if (!sameScope(a.scope, b.scope)) return;
    const [ra, rb] = [root(a.id), root(b.id)];
    if (ra === rb) return;
    // The lower id becomes the root, so cluster identity does not depend on input order.
    const [low, high] = ra < rb ? [ra, rb] : [rb, ra];
    parent.set(high, low);
  };
  const byClaim = new Map<string, MaturingObject>();
  for (const object of members) {
    if (!object.claim) continue;
    const { subject, predicate, object: value } = object.claim;
    const key = [scopeKey(object.scope), subject, predicate, value].map(normaliseClaimPart).join("|");
    const first = byClaim.get(key);
    if (first) join(first, object);
    else byClaim.set(key, object);
  }
  for (const pair of pairs) {
    const a = byId.get(pair.aId);
    const b = byId.get(pair.bId);
    if (a && b && pair.similarity >= clusterSimilarity) join(a, b);
  }
  const clusters = new Map<string, MaturingObject[]>();
  for (const object of members) {
    const key = root(object.id);
    const cluster = clusters.get(key);
    if (cluster) cluster.push(object);
    else clusters.set(key, [object]);
  }
  return [...clusters.values()]
    .map((c) => c.sort((a, b) => (a.id < b.id ? -1 : 1)))
    .sort((a, b) => ((a[0] as MaturingObject).id < (b[0] as MaturingObject).id ? -1 : 1));
}

export function qualifiesAsPattern(cluster: readonly MaturingObject[], options: PrincipleOptions): boolean {
  const sessions = new Set(cluster.flatMap((o) => o.sessionIds)).size;
  const assertions = cluster.reduce((sum, o) => sum + o.reinforcementCount, 0);
  const meanConfidence = cluster.reduce((sum, o) => sum + o.confidence, 0) / cluster.length;
  return (
    cluster.length <= options.maxClusterSize &&
    sessions >= options.minSessions &&
    assertions >= options.minAssertions &&
    meanConfidence >= options.minConfidence
  );
}

/** The member whose wording the principle takes by default: most confident, then most asserted, then lowest id. */
export function strongestMember(cluster: readonly MaturingObject[]): MaturingObject {
  return [...cluster].sort(
    (a, b) =>
      b.confidence - a.confidence || b.reinforcementCount - a.reinforcementCount || (a.id < b.id ? -1 : 1),
  )[0] as MaturingObject;
}

/** A principle's id follows from its scope and founding member, so re-running a cycle creates nothing new. */
export function principleId(cluster: readonly MaturingObject[]): string {
  const founder = cluster[0] as MaturingObject;
  const digest = createHash("sha256")
    .update(`${scopeKey(founder.scope)}\n${founder.id}`)
    .digest("hex");
  return `principle-${digest.slice(0, 16)}`;
}

/**
 * The qualifying clusters a cycle acts on: each either founds a principle (no prior) or reinforces the principle
 * already drawing evidence from it — unless that principle has nothing new from it.
 */
export function findPatterns(
  objects: readonly MaturingObject[],
  pairs: readonly SimilarPair[],
  options: PrincipleOptions = defaultPrincipleOptions,
): Pattern[] {
  const existing = objects.filter((o) => isLive(o) && o.type === "principle");
  const patterns: Pattern[] = [];
  for (const cluster of clusterPatterns(objects, pairs, options.clusterSimilarity)) {
    if (!qualifiesAsPattern(cluster, options)) continue;
    const memberIds = cluster.map((o) => o.id);
    const members = new Set(memberIds);
    const prior = existing.find(
      (p) =>
        sameScope(p.scope, (cluster[0] as MaturingObject).scope) &&
        p.links.some((l) => l.relation === "evidence" && members.has(l.targetId)),
    );
    const newEvidence = prior
      ? memberIds.filter((id) => !prior.links.some((l) => l.relation === "evidence" && l.targetId === id))
      : memberIds;
    // A principle is as fresh as its newest evidence: reinforcing the evidence keeps the principle from decaying.
    const freshest = latestInstant(cluster.map((o) => o.lastReinforcedAt));
    if (prior && newEvidence.length === 0 && freshest <= prior.lastReinforcedAt) continue;
    patterns.push({ cluster, prior, newEvidence, freshest });
  }
  return patterns;
}

/** What the reflection model is asked to word: each pattern that founds a principle, by principle id. */
export function principleDrafts(patterns: readonly Pattern[]): PrincipleDraft[] {
  return patterns
    .filter((p) => p.prior === undefined)
    .map(({ cluster }) => {
      const strongestFirst = [...cluster].sort(
        (a, b) =>
          b.confidence - a.confidence ||
          b.reinforcementCount - a.reinforcementCount ||
          (a.id < b.id ? -1 : 1),
      );
      return {
        id: principleId(cluster),
        types: [...new Set(cluster.map((o) => o.type))].sort(),
        statements: [...new Set(strongestFirst.map((o) => o.statement))],
      };
    });
}

/**
 * Consolidate qualifying clusters. A cluster some existing principle already draws evidence from reinforces
 * that principle (and adds new evidence links) instead of creating a second one. `wording` supplies the
 * reflection model's phrasing for new principles, by id; the decision to create one never depends on the model,
 * but with `requireWording` a principle without a wording waits for a later cycle.
 */
export function consolidatePrinciples(
  objects: readonly MaturingObject[],
  pairs: readonly SimilarPair[],
  now: string,
  options: PrincipleOptions = defaultPrincipleOptions,
  wording: ReadonlyMap<string, string> = new Map(),
  patterns: readonly Pattern[] = findPatterns(objects, pairs, options),
): Consolidation {
  const evidenceChanges = new Map<string, MaturingObject>();
  const result: Consolidation = { principles: [], evidence: [], created: 0, reinforced: 0, deferred: [] };

  for (const { cluster, prior, newEvidence, freshest } of patterns) {
    if (!prior && options.requireWording && !wording.has(principleId(cluster))) {
      result.deferred.push(principleId(cluster));
      continue;
    }
    const base: MaturingObject = prior ?? foundPrinciple(cluster, now, wording);
    const links = newEvidence.reduce(
      (acc, id) => addLink(acc, { relation: "evidence", targetId: id }),
      base.links,
    );
    const principle: MaturingObject = prior
      ? {
          ...prior,
          links,
          confidence: applyConfidenceEvent(prior.confidence, { kind: "reinforcement", newSession: false }),
          reinforcementCount: prior.reinforcementCount + 1,
          sessionIds: sortedUnion(
            prior.sessionIds,
            cluster.flatMap((o) => o.sessionIds),
          ),
          lastReinforcedAt: latestInstant([freshest, prior.lastReinforcedAt]),
          updatedAt: now,
        }
      : { ...base, links };
    result.principles.push(principle);
    if (prior) result.reinforced += 1;
    else result.created += 1;
    const added = new Set(newEvidence);
    for (const member of cluster.filter((o) => added.has(o.id))) {
      const current = evidenceChanges.get(member.id) ?? member;
      evidenceChanges.set(member.id, {
        ...current,
        links: addLink(current.links, { relation: "evidenceFor", targetId: principle.id }),
        updatedAt: now,
      });
    }
  }
  result.evidence = [...evidenceChanges.values()].sort((a, b) => (a.id < b.id ? -1 : 1));
  return result;
}

/** The latest of ISO-8601 UTC instants (they sort as strings). */
function latestInstant(instants: readonly string[]): string {
  return [...instants].sort().at(-1) ?? "";
}

function foundPrinciple(
  cluster: readonly MaturingObject[],
  now: string,
  wording: ReadonlyMap<string, string>,
): MaturingObject {
  const id = principleId(cluster);
  const strongest = strongestMember(cluster);
  const meanConfidence = cluster.reduce((sum, o) => sum + o.confidence, 0) / cluster.length;
  const dimensions: Record<string, string[]> = {};
  for (const member of cluster) {
    for (const [name, values] of Object.entries(member.dimensions)) {
      dimensions[name] = sortedUnion(dimensions[name] ?? [], values);
    }
  }
  return {
    id,
    type: "principle",
    statement: wording.get(id) ?? strongest.statement,
    claim: strongest.claim,
    scope: strongest.scope,
    confidence: applyConfidenceEvent(meanConfidence, { kind: "survivedDream" }, defaultConfidenceConstants),
    reinforcementCount: 1,
    toolConfirmations: 0,
    sessionIds: sortedUnion(
      [],
      cluster.flatMap((o) => o.sessionIds),
    ),
    sourceTurnIds: sortedUnion(
      [],
      cluster.flatMap((o) => o.sourceTurnIds),
    ).slice(0, 64),
    dimensions,
    createdAt: now,
    lastReinforcedAt: now,
    updatedAt: now,
    validFrom: now,
    state: "active",
    links: [],
    promotion: "none",
  };
}
