/**
 * Step 1 of RAM: the policy gate, expressed as OpenSearch filter clauses. It sits inside every candidate query
 * (BM25 `bool.filter`, k-NN `filter`), so an ineligible item is never scored, never counted and never traced.
 */
import type { DimensionPolicy, KnowledgeType, Principal } from "@remram/contract";
import { knowledgeTypes } from "@remram/contract";

export type FilterClause = Record<string, unknown>;

export interface GateRequest {
  principal: Principal;
  now: string;
  types?: readonly KnowledgeType[] | undefined;
  minConfidence?: number | undefined;
  dimensionFilters?: Record<string, readonly string[]> | undefined;
  /** Where the model the bundle goes to runs; unknown counts as cloud. */
  modelLocation?: "local" | "cloud" | undefined;
  /** The operator lets the user's private items reach a cloud model (contact details never do). */
  allowPrivateToCloud?: boolean | undefined;
}

/** Scope and ownership: own user items, the own household's items, shared items — as far as policy allows. */
export function scopeClause(principal: Principal, policy: DimensionPolicy): FilterClause {
  const allowed = new Set(policy.privacy.allowedScopes);
  const should: FilterClause[] = [];
  if (allowed.has("user")) {
    should.push({
      bool: { filter: [{ term: { scope: "user" } }, { term: { "owner.userId": principal.userId } }] },
    });
  }
  if (allowed.has("household") && principal.householdId !== undefined) {
    should.push({
      bool: {
        filter: [{ term: { scope: "household" } }, { term: { "owner.householdId": principal.householdId } }],
      },
    });
  }
  if (allowed.has("shared")) should.push({ term: { scope: "shared" } });
  // No allowed scope at all must match nothing, not everything.
  if (should.length === 0) return { bool: { must_not: { match_all: {} } } };
  return { bool: { should, minimum_should_match: 1 } };
}

/** Privacy: the policy's injectable levels; `private` only for its owning user; `secret` never. */
export function privacyClause(principal: Principal, policy: DimensionPolicy): FilterClause {
  const injectable = policy.privacy.injectableLevels.filter(
    (level) => level !== "secret" && level !== "private",
  );
  return {
    bool: {
      should: [
        ...(injectable.length > 0 ? [{ terms: { privacy: injectable } }] : []),
        {
          bool: {
            filter: [{ term: { privacy: "private" } }, { term: { "owner.userId": principal.userId } }],
          },
        },
      ],
      minimum_should_match: 1,
    },
  };
}

/** Consent: retrieval allowed, and for every agent or this one. */
export function consentClauses(principal: Principal): FilterClause[] {
  return [{ term: { "consent.retrieval": true } }, { terms: { "consent.agents": ["*", principal.agentId] } }];
}

/** Valid now: started, and not invalidated (contradicted or expired) before now. */
export function validityClauses(now: string): FilterClause[] {
  return [
    { range: { "validity.validFrom": { lte: now } } },
    {
      bool: {
        should: [
          { bool: { must_not: { exists: { field: "validity.invalidAt" } } } },
          { range: { "validity.invalidAt": { gt: now } } },
        ],
        minimum_should_match: 1,
      },
    },
  ];
}

/**
 * Sensitivity: items holding contact details (a user's own, kept private) never go to a model in the cloud; a run
 * on a local model sees them under the usual scope and privacy rules.
 */
export function sensitivityClauses(modelLocation: GateRequest["modelLocation"]): FilterClause[] {
  if (modelLocation === "local") return [];
  return [{ bool: { must_not: { term: { sensitivity: "contact" } } } }];
}

/**
 * Private items stay on the box as well: a cloud model reads the asking user's private items only when the
 * operator allows it, so the bundle Cortex renders for a cloud model is one the hooks can inject as is.
 */
export function cloudPrivacyClauses(
  modelLocation: GateRequest["modelLocation"],
  allowPrivateToCloud: GateRequest["allowPrivateToCloud"],
): FilterClause[] {
  if (modelLocation === "local" || allowPrivateToCloud === true) return [];
  return [{ bool: { must_not: { term: { privacy: "private" } } } }];
}

export function dimensionFilterClauses(
  filters: Record<string, readonly string[]> | undefined,
): FilterClause[] {
  if (filters === undefined) return [];
  return Object.keys(filters)
    .sort()
    .map((name) => ({
      terms: { dimensionTags: (filters[name] ?? []).map((value) => `${name}:${value.toLowerCase()}`) },
    }));
}

/** The knowledge types a request may see: its own list (or all) minus the policy's exclusions. */
export function eligibleTypes(request: GateRequest, policy: DimensionPolicy): KnowledgeType[] {
  const excluded = new Set(policy.eligibility.excludeTypes);
  return (request.types ?? knowledgeTypes).filter((type) => !excluded.has(type));
}

export function effectiveMinConfidence(request: GateRequest, policy: DimensionPolicy): number {
  return Math.max(policy.eligibility.minConfidence, request.minConfidence ?? 0);
}

/** The confidence floor: the policy's minimum, or the request's if higher. */
export function confidenceClause(request: GateRequest, policy: DimensionPolicy): FilterClause {
  return { range: { confidence: { gte: effectiveMinConfidence(request, policy) } } };
}

/** Clauses every index shares but the confidence floor: scope, privacy, consent, validity, sensitivity, dimensions. */
function stableClauses(request: GateRequest, policy: DimensionPolicy): FilterClause[] {
  return [
    scopeClause(request.principal, policy),
    privacyClause(request.principal, policy),
    ...consentClauses(request.principal),
    ...validityClauses(request.now),
    ...sensitivityClauses(request.modelLocation),
    ...cloudPrivacyClauses(request.modelLocation, request.allowPrivateToCloud),
    ...dimensionFilterClauses(request.dimensionFilters),
  ];
}

/**
 * The gate on knowledge vectors: everything but the confidence floor. A vector document is rewritten only when
 * these fields change; confidence changes with every reflection and dream cycle, so it stays on the knowledge
 * document and retrieval applies the full gate there before anything found by k-NN is ranked.
 */
export function knowledgeVectorGate(request: GateRequest, policy: DimensionPolicy): FilterClause[] {
  return [
    { term: { status: "active" } },
    { terms: { type: eligibleTypes(request, policy) } },
    ...stableClauses(request, policy),
  ];
}

/** The full gate for knowledge objects: the vector gate plus the confidence floor. */
export function knowledgeGate(request: GateRequest, policy: DimensionPolicy): FilterClause[] {
  return [...knowledgeVectorGate(request, policy), confidenceClause(request, policy)];
}

/** The gate for chunks. Chunks carry no knowledge type; a request restricted to types sees no chunks. */
export function chunkGate(request: GateRequest, policy: DimensionPolicy): FilterClause[] | null {
  if (request.types !== undefined) return null;
  return [...stableClauses(request, policy), confidenceClause(request, policy)];
}
