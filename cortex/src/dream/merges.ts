import {
  addLink,
  isLive,
  type MaturingObject,
  normaliseClaimPart,
  sameScope,
  scopeKey,
  sortedUnion,
} from "../core/knowledge.js";
import { invalidate } from "../core/lifecycle.js";
import { compareClaims } from "../core/match.js";
import { areOpposites } from "../core/polarity.js";
import type { SimilarPair } from "./contradictions.js";
import { isStopWord } from "./wording.js";

/**
 * Near-duplicate merging (seed 000 §4 "/dream: object merges"). Objects that say the same thing in the same scope —
 * the same statement, the same claim, or embeddings at least `mergeSimilarity` apart with the same names and
 * numbers — become one: the survivor keeps its id and wording and takes the others' sessions, turns, assertions,
 * dimensions and links; each merged object is invalidated and linked `supersededBy` the survivor (which lists it
 * under `supersedes`), never deleted. Reflection reinforces rather than duplicates when it sees the match; this
 * catches what it could not see (no embedding then, two reflections at once, an import, an explicit save).
 */

export interface MergeOptions {
  /**
   * Cosine at or above which two statements are one. Stricter than reflection's 0.90: reflection adds the
   * evidence of a new assertion, while a merge invalidates an object nobody re-asserted.
   */
  mergeSimilarity: number;
  multiValuedPredicates: readonly string[];
}

export const defaultMergeOptions: MergeOptions = { mergeSimilarity: 0.92, multiValuedPredicates: [] };

export interface Merge {
  survivorId: string;
  /** The merged objects, in the order they were merged. */
  mergedIds: string[];
}

export interface MergeResult {
  /** Survivors and merged objects in their new state. */
  changed: MaturingObject[];
  merges: Merge[];
}

interface Edge {
  aId: string;
  bId: string;
  /** 1 for an equal statement or claim, else the cosine; stronger edges merge first. */
  strength: number;
  /** Found by the same statement: the names-and-numbers check is not needed. */
  structural: boolean;
}

/**
 * Merge near-duplicates among live objects. With `changedSince`, only groups and pairs touching an object changed
 * after it (or a fresh pair) are examined; the rest were examined by an earlier cycle. `governance` maps an id to
 * a key (privacy and consent) that must be equal for two objects to merge: a merge must not widen who sees what.
 */
export function mergeDuplicates(
  objects: readonly MaturingObject[],
  pairs: readonly SimilarPair[],
  now: string,
  changedSince: string | undefined,
  governance: ReadonlyMap<string, string> = new Map(),
  options: MergeOptions = defaultMergeOptions,
): MergeResult {
  const state = new Map(objects.filter(isLive).map((o) => [o.id, o]));
  const changed = (o: MaturingObject): boolean => changedSince === undefined || o.updatedAt > changedSince;
  const groupKey = (o: MaturingObject) => `${scopeKey(o.scope)}|${o.type}|${governance.get(o.id) ?? ""}`;

  const edges: Edge[] = [];
  const byText = new Map<string, MaturingObject[]>();
  for (const object of state.values()) {
    const keys = [`s|${groupKey(object)}|${normaliseClaimPart(object.statement)}`];
    if (object.claim) {
      const { subject, predicate, object: value } = object.claim;
      keys.push(`c|${groupKey(object)}|${[subject, predicate, value].map(normaliseClaimPart).join("|")}`);
    }
    for (const key of keys) {
      const group = byText.get(key);
      if (group) group.push(object);
      else byText.set(key, [object]);
    }
  }
  for (const [key, group] of byText) {
    if (group.length < 2 || !group.some(changed)) continue;
    const sorted = [...group].sort((a, b) => (a.id < b.id ? -1 : 1));
    // The same statement needs no further check; the same claim may be worded with other names ("a cat named Tom").
    const structural = key.startsWith("s|");
    for (const other of sorted.slice(1)) {
      edges.push({ aId: (sorted[0] as MaturingObject).id, bId: other.id, strength: 1, structural });
    }
  }
  for (const pair of pairs) {
    if (pair.similarity < options.mergeSimilarity) continue;
    const a = state.get(pair.aId);
    const b = state.get(pair.bId);
    if (!a || !b || a.id === b.id || groupKey(a) !== groupKey(b)) continue;
    if (!changed(a) && !changed(b) && !pair.fresh) continue;
    edges.push({ aId: a.id, bId: b.id, strength: pair.similarity, structural: false });
  }
  edges.sort(
    (x, y) =>
      y.strength - x.strength ||
      (x.aId < y.aId ? -1 : x.aId > y.aId ? 1 : 0) ||
      (x.bId < y.bId ? -1 : x.bId > y.bId ? 1 : 0),
  );

  const into = new Map<string, string>();
  const root = (id: string): string => {
    let current = id;
    while (into.has(current)) current = into.get(current) as string;
    return current;
  };
  const merges = new Map<string, Merge>();
  const touched = new Set<string>();
  for (const edge of edges) {
    const [ra, rb] = [root(edge.aId), root(edge.bId)];
    if (ra === rb) continue;
    const a = state.get(ra) as MaturingObject;
    const b = state.get(rb) as MaturingObject;
    if (!mayMerge(a, b, edge.structural, options)) continue;
    const [survivor, merged] = survivorFirst(a, b);
    state.set(survivor.id, absorb(survivor, merged, now));
    state.set(merged.id, {
      ...invalidate(merged, now),
      links: addLink(merged.links, { relation: "supersededBy", targetId: survivor.id }),
    });
    into.set(merged.id, survivor.id);
    touched.add(survivor.id).add(merged.id);
    // The principles the merged object was evidence for (and, for a merged principle, its evidence) now name the
    // survivor too, so the next cycle finds the principle from the survivor rather than founding a second one.
    for (const link of merged.links) {
      if (link.relation !== "evidenceFor" && link.relation !== "evidence") continue;
      const target = state.get(link.targetId);
      if (!target || !isLive(target) || target.id === survivor.id) continue;
      const relation = link.relation === "evidence" ? "evidenceFor" : "evidence";
      state.set(target.id, {
        ...target,
        links: addLink(target.links, { relation, targetId: survivor.id }),
        updatedAt: now,
      });
      touched.add(target.id);
    }
    // A survivor that had absorbed others and is now absorbed itself hands its list on.
    const earlier = merges.get(merged.id);
    merges.delete(merged.id);
    const entry = merges.get(survivor.id) ?? { survivorId: survivor.id, mergedIds: [] };
    entry.mergedIds.push(merged.id, ...(earlier?.mergedIds ?? []));
    merges.set(survivor.id, entry);
  }
  return {
    changed: [...touched].sort().map((id) => state.get(id) as MaturingObject),
    merges: [...merges.values()].sort((x, y) => (x.survivorId < y.survivorId ? -1 : 1)),
  };
}

/** Whether two live objects in the same scope, type and governance say the same thing. */
function mayMerge(a: MaturingObject, b: MaturingObject, structural: boolean, options: MergeOptions): boolean {
  if (!sameScope(a.scope, b.scope) || a.type !== b.type) return false;
  if (a.promotion === "promoted" && b.promotion === "promoted") return false;
  // One refines the other (reflection's link): the narrower statement is not a duplicate of the broader one.
  const refines = (x: MaturingObject, y: MaturingObject) =>
    x.links.some((l) => (l.relation === "refines" || l.relation === "refinedBy") && l.targetId === y.id);
  if (refines(a, b) || refines(b, a)) return false;
  if (a.claim && b.claim && compareClaims(a.claim, b.claim, options.multiValuedPredicates) !== "same") {
    // Different subjects or predicates are different facts however alike the words; another object conflicts.
    return false;
  }
  if (areOpposites(a.statement, b.statement)) return false;
  return structural || sameNamesAndNumbers(a.statement, b.statement);
}

/**
 * Names and numbers one statement mentions (capitalised words, but not a sentence's opening "The" or "Never", and
 * digits) appear in the other: "Alice's bike is red" and "Bob's bike is red", or "… in Postgres" and "… in SQLite",
 * embed close but differ.
 */
export function sameNamesAndNumbers(a: string, b: string): boolean {
  const tokens = (text: string) => text.split(/[^\p{L}\p{N}]+/u).filter((t) => t.length > 0);
  const names = (text: string) =>
    tokens(text)
      .filter((t, i) => /\p{N}/u.test(t) || (/^\p{Lu}/u.test(t) && !(i === 0 && isStopWord(t))))
      .map(fold);
  const words = (text: string) => new Set(tokens(text).map(fold));
  const [wordsA, wordsB] = [words(a), words(b)];
  return names(a).every((n) => wordsB.has(n)) && names(b).every((n) => wordsA.has(n));
}

/** Lower case, a possessive or plural "s" cut: "Fridays" and "Friday", "Alice's" and "Alice" compare equal. */
function fold(token: string): string {
  const lower = token.toLowerCase();
  return lower.length > 3 && lower.endsWith("s") && !lower.endsWith("ss") ? lower.slice(0, -1) : lower;
}

/**
 * The object that stays: one in a promoted artifact, then one a user asked to keep, then the more confident, the
 * more asserted, the older, the lower id.
 */
function survivorFirst(a: MaturingObject, b: MaturingObject): [MaturingObject, MaturingObject] {
  const rank = (o: MaturingObject) => [o.promotion === "promoted" ? 1 : 0, o.userDirective ? 1 : 0];
  const [ra, rb] = [rank(a), rank(b)];
  const order =
    (rb[0] as number) - (ra[0] as number) ||
    (rb[1] as number) - (ra[1] as number) ||
    b.confidence - a.confidence ||
    b.reinforcementCount - a.reinforcementCount ||
    (a.createdAt < b.createdAt ? -1 : a.createdAt > b.createdAt ? 1 : 0) ||
    (a.id < b.id ? -1 : 1);
  return order <= 0 ? [a, b] : [b, a];
}

/** The survivor with the merged object's evidence: the provenance of both stays on the one that remains. */
function absorb(survivor: MaturingObject, merged: MaturingObject, now: string): MaturingObject {
  const dimensions: Record<string, string[]> = Object.fromEntries(
    Object.entries(survivor.dimensions).map(([name, values]) => [name, [...values]]),
  );
  for (const [name, values] of Object.entries(merged.dimensions)) {
    dimensions[name] = sortedUnion(dimensions[name] ?? [], values);
  }
  const inherited = merged.links.filter((l) => l.targetId !== survivor.id);
  const links = [...inherited, { relation: "supersedes" as const, targetId: merged.id }].reduce(
    (all, link) => addLink(all, link),
    survivor.links,
  );
  return {
    ...survivor,
    claim: survivor.claim ?? merged.claim,
    // The stronger of the two, not a sum: a duplicate is not new evidence, only the same evidence counted twice.
    confidence: Math.max(survivor.confidence, merged.confidence),
    reinforcementCount: survivor.reinforcementCount + merged.reinforcementCount,
    toolConfirmations: survivor.toolConfirmations + merged.toolConfirmations,
    sessionIds: sortedUnion(survivor.sessionIds, merged.sessionIds),
    sourceTurnIds: sortedUnion(survivor.sourceTurnIds, merged.sourceTurnIds),
    dimensions,
    // ISO-8601 UTC instants sort as strings.
    lastReinforcedAt: [survivor.lastReinforcedAt, merged.lastReinforcedAt].sort()[1] as string,
    validFrom: [survivor.validFrom, merged.validFrom].sort()[0] as string,
    userDirective: survivor.userDirective || merged.userDirective || undefined,
    links,
    updatedAt: now,
  };
}
