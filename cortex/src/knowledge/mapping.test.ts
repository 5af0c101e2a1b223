import { type KnowledgeObject, knowledgeObject as knowledgeObjectSchema } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { applyMaturing, toMaturing } from "./mapping.js";

const at = "2026-02-01T00:00:00.000Z";
const stored: KnowledgeObject = knowledgeObjectSchema.parse({
  id: "k1",
  statement: "Bins go out on Tuesday",
  type: "fact",
  claim: { subject: "bins", predicate: "collection day", object: "tuesday" },
  provenance: {
    key: "p1",
    source: "reflection",
    sessionId: "s1",
    sourceTurnIds: ["t1"],
    observedAt: at,
    ingestedAt: at,
  },
  scope: "household",
  owner: { householdId: "h1" },
  privacy: "household",
  consent: {},
  dimensions: { topic: ["chores"] },
  confidence: 0.6,
  reinforcementCount: 2,
  sessionIds: ["s1", "s2"],
  lastReinforcedAt: at,
  validity: { validFrom: at },
  links: [{ rel: "related", targetId: "k9" }],
  promotionState: "candidate",
  createdAt: at,
  updatedAt: at,
});

describe("mapping between stored objects and the maturation view", () => {
  it("reads scope, owners, validity, links and promotion into the view", () => {
    expect(toMaturing(stored)).toMatchObject({
      scope: { kind: "household", ownerIds: ["h1"] },
      sourceTurnIds: ["t1"],
      invalidAt: undefined,
      state: "active",
      links: [{ relation: "related", targetId: "k9" }],
      promotion: "none",
    });
  });

  it("round-trips without touching provenance, privacy, consent or usage", () => {
    const back = applyMaturing(stored, toMaturing(stored));
    expect(back).toEqual({ ...stored, promotionState: "none" });
    expect(knowledgeObjectSchema.safeParse(back).success).toBe(true);
  });

  it("writes invalidation and new links back in the stored shape", () => {
    const view = toMaturing(stored);
    const back = applyMaturing(stored, {
      ...view,
      state: "invalidated",
      invalidAt: "2026-03-01T00:00:00.000Z",
      links: [...view.links, { relation: "supersededBy", targetId: "k2" }],
    });
    expect(back.status).toBe("invalidated");
    expect(back.validity.invalidAt).toBe("2026-03-01T00:00:00.000Z");
    expect(back.links).toEqual([
      { rel: "related", targetId: "k9" },
      { rel: "supersededBy", targetId: "k2" },
    ]);
  });
});
