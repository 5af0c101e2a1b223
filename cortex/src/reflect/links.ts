import type { DeltaLinkEnd, ReflectedLinkRelation } from "@remram/contract";
import type { LinkRelation } from "../core/knowledge.js";

/**
 * Reflected links in the knowledge model's terms. The stored relation is the one the `from` end holds; the `to`
 * end holds its reverse (plan.ts `reciprocal`). "A supports B" is A evidenceFor B and B's evidence A, as dream links
 * a principle to what supports it.
 */
export const storedRelation: Record<ReflectedLinkRelation, LinkRelation> = {
  supports: "evidenceFor",
  contradicts: "conflicts",
  refines: "refines",
  related: "related",
};

export const reciprocal: Record<LinkRelation, LinkRelation> = {
  related: "related",
  conflicts: "conflicts",
  supersedes: "supersededBy",
  supersededBy: "supersedes",
  evidence: "evidenceFor",
  evidenceFor: "evidence",
  refines: "refinedBy",
  refinedBy: "refines",
};

/**
 * The object id a link end names: a stored id as given; an item or a correction's replacement as the object it
 * became (created or reinforced) while the delta was planned. Undefined when the delta has no such entry.
 */
export function resolveLinkEnd(
  end: DeltaLinkEnd,
  itemIds: readonly (string | undefined)[],
  replacementIds: readonly (string | undefined)[],
): string | undefined {
  if ("id" in end) return end.id;
  if ("item" in end) return itemIds[end.item];
  return replacementIds[end.replacement];
}
