/**
 * The plain-data view of a knowledge object that reflection and dream reason over.
 *
 * It carries only what the maturation rules read or write; the store maps its documents to and from it, so
 * the rules stay pure functions over plain data with `now`, ids and thresholds passed in.
 */

import type { KnowledgeType, Scope as ScopeKind } from "@remram/contract";

/** The contract's knowledge types and scope kinds (`knowledgeTypes`, `scopes` in @remram/contract). */
export type { KnowledgeType, ScopeKind };

/** Who knowledge belongs to: a user's own, their household's, or shared among named owners. */
export interface Scope {
  kind: ScopeKind;
  ownerIds: readonly string[];
}

/** The identity a session acts as; it comes from the gateway session, never from model output. */
export interface Principal {
  userId: string;
  householdId?: string | undefined;
  agentId: string;
}

/** A structured (subject, predicate, object) reading of a statement, used for claim-level matching. */
export interface Claim {
  subject: string;
  predicate: string;
  object: string;
}

/** active: eligible for retrieval; demoted: decayed out of eligibility; invalidated: validity ended. */
export type LifecycleState = "active" | "demoted" | "invalidated";

export type LinkRelation =
  | "related"
  | "conflicts"
  | "supersedes"
  | "supersededBy"
  | "evidence"
  | "evidenceFor"
  /** A narrower or more precise statement of the target (reflection links; the target holds `refinedBy`). */
  | "refines"
  | "refinedBy";

export interface Link {
  relation: LinkRelation;
  targetId: string;
}

export type PromotionState = "none" | "proposed" | "promoted";

export interface MaturingObject {
  id: string;
  type: KnowledgeType;
  statement: string;
  claim?: Claim | undefined;
  scope: Scope;
  confidence: number;
  /** How many times reflection asserted it (the first assertion counts as 1). */
  reinforcementCount: number;
  /** How many times a tool result confirmed it (live evidence, seed 001: LIVE > RAW > DERIVED). */
  toolConfirmations: number;
  /** Distinct sessions that asserted it, sorted; cross-session consistency is read from here. */
  sessionIds: readonly string[];
  sourceTurnIds: readonly string[];
  dimensions: Readonly<Record<string, readonly string[]>>;
  createdAt: string;
  /** When it was last asserted or confirmed; "newer" in contradiction resolution means this. */
  lastReinforcedAt: string;
  /** When dream last applied disuse decay to it, so a sweep never decays the same idle days twice. */
  lastDecayedAt?: string | undefined;
  /** Last change of any kind; dream's incremental pass looks at objects changed since the last cycle. */
  updatedAt: string;
  validFrom: string;
  invalidAt?: string | undefined;
  state: LifecycleState;
  links: readonly Link[];
  promotion: PromotionState;
  /** Set when a user explicitly asked to keep this ("remember this", "write that down"): a promotion criterion. */
  userDirective?: boolean | undefined;
}

/** Objects retrieval may use and reconciliation reasons over: neither demoted nor past their validity. */
export function isLive(object: Pick<MaturingObject, "state" | "invalidAt">): boolean {
  return object.state === "active" && object.invalidAt === undefined;
}

/** Normalised text for equality of claim parts: case, surrounding and repeated whitespace do not matter. */
export function normaliseClaimPart(text: string): string {
  return text.trim().toLowerCase().replace(/\s+/g, " ");
}

export function sameScope(a: Scope, b: Scope): boolean {
  if (a.kind !== b.kind || a.ownerIds.length !== b.ownerIds.length) return false;
  const owners = [...a.ownerIds].sort();
  return [...b.ownerIds].sort().every((owner, index) => owner === owners[index]);
}

/** A stable string for grouping by scope (e.g. "household:h1"). */
export function scopeKey(scope: Scope): string {
  return `${scope.kind}:${[...scope.ownerIds].sort().join(",")}`;
}

export function addLink(links: readonly Link[], link: Link): Link[] {
  const present = links.some((l) => l.relation === link.relation && l.targetId === link.targetId);
  return present ? [...links] : [...links, link];
}

export function sortedUnion(a: readonly string[], b: readonly string[]): string[] {
  return [...new Set([...a, ...b])].sort();
}
