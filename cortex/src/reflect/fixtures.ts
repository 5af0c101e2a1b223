import type { MaturingObject } from "./knowledge.js";

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
