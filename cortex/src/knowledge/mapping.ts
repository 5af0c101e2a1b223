import type { KnowledgeObject } from "@remram/contract";
import type { MaturingObject, Scope } from "../core/knowledge.js";

/**
 * Between the stored knowledge object (@remram/contract, contract/src/knowledge.ts) and the maturation view the pure rules
 * work on. Fields the rules do not own (provenance, privacy, consent, usage counters) pass through untouched.
 */

const maxLinks = 64;

export function scopeOf(object: Pick<KnowledgeObject, "scope" | "owner">): Scope {
  switch (object.scope) {
    case "user":
      return { kind: "user", ownerIds: object.owner.userId === undefined ? [] : [object.owner.userId] };
    case "household":
      return {
        kind: "household",
        ownerIds: object.owner.householdId === undefined ? [] : [object.owner.householdId],
      };
    case "shared":
      return { kind: "shared", ownerIds: [] };
  }
}

export function ownerOf(scope: Scope): KnowledgeObject["owner"] {
  if (scope.kind === "user") return { userId: scope.ownerIds[0] };
  if (scope.kind === "household") return { householdId: scope.ownerIds[0] };
  return {};
}

export function toMaturing(object: KnowledgeObject): MaturingObject {
  return {
    id: object.id,
    type: object.type,
    statement: object.statement,
    claim: object.claim,
    scope: scopeOf(object),
    confidence: object.confidence,
    reinforcementCount: Math.max(1, object.reinforcementCount),
    toolConfirmations: object.toolConfirmations,
    sessionIds: [...object.sessionIds].sort(),
    sourceTurnIds: [...object.provenance.sourceTurnIds].sort(),
    dimensions: object.dimensions,
    createdAt: object.createdAt,
    lastReinforcedAt: object.lastReinforcedAt,
    lastDecayedAt: object.lastDecayedAt ?? undefined,
    updatedAt: object.updatedAt,
    validFrom: object.validity.validFrom,
    invalidAt: object.validity.invalidAt ?? undefined,
    state: object.status,
    links: object.links.map((l) => ({ relation: l.rel, targetId: l.targetId })),
    promotion: object.promotionState === "candidate" ? "none" : object.promotionState,
    userDirective: object.userDirective || undefined,
  };
}

/** The stored object with the maturation view's fields applied (links beyond the schema's bound are dropped). */
export function applyMaturing(stored: Omit<KnowledgeObject, "id">, object: MaturingObject): KnowledgeObject {
  return {
    ...stored,
    id: object.id,
    type: object.type,
    statement: object.statement,
    claim: object.claim,
    scope: object.scope.kind,
    owner: ownerOf(object.scope),
    confidence: object.confidence,
    reinforcementCount: object.reinforcementCount,
    toolConfirmations: object.toolConfirmations,
    sessionIds: [...object.sessionIds].slice(-256),
    provenance: { ...stored.provenance, sourceTurnIds: [...object.sourceTurnIds].slice(-64) },
    dimensions: Object.fromEntries(
      Object.entries(object.dimensions).map(([k, v]) => [k, [...v].slice(0, 32)]),
    ),
    lastReinforcedAt: object.lastReinforcedAt,
    lastDecayedAt: object.lastDecayedAt ?? null,
    userDirective: object.userDirective ?? false,
    validity: { validFrom: object.validFrom, invalidAt: object.invalidAt ?? null },
    links: object.links.slice(0, maxLinks).map((l) => ({ rel: l.relation, targetId: l.targetId })),
    promotionState: object.promotion,
    status: object.state,
    createdAt: object.createdAt,
    updatedAt: object.updatedAt,
  };
}
