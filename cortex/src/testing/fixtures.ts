import { type KnowledgeObject, knowledgeObject as storedSchema } from "@remram/contract";
import type { MaturingObject } from "../core/knowledge.js";

/** A valid, active user-scoped object for tests; override what a test is about. */
export function knowledgeObject(
  overrides: Partial<MaturingObject> & Pick<MaturingObject, "id">,
): MaturingObject {
  const at = overrides.createdAt ?? "2026-01-01T00:00:00.000Z";
  return {
    type: "fact",
    statement: `statement of ${overrides.id}`,
    scope: { kind: "user", ownerIds: ["alice"] },
    confidence: 0.5,
    reinforcementCount: 1,
    toolConfirmations: 0,
    sessionIds: ["s1"],
    sourceTurnIds: ["t1"],
    dimensions: {},
    createdAt: at,
    lastReinforcedAt: at,
    updatedAt: at,
    validFrom: at,
    state: "active",
    links: [],
    promotion: "none",
    ...overrides,
  };
}

/** A valid, active household object as stored in the knowledge index; override what a test is about. */
export function storedObject(overrides: Partial<KnowledgeObject> = {}): KnowledgeObject {
  const at = "2026-03-01T00:00:00.000Z";
  return storedSchema.parse({
    id: "k1",
    statement: "The boat is in the north shed",
    type: "fact",
    provenance: { key: "test:1", source: "reflection", observedAt: at, ingestedAt: at },
    scope: "household",
    owner: { householdId: "h1" },
    privacy: "household",
    consent: {},
    dimensions: { place: ["North Shed"] },
    confidence: 0.5,
    lastReinforcedAt: at,
    validity: { validFrom: at },
    createdAt: at,
    updatedAt: at,
    ...overrides,
  });
}
