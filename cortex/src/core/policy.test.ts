import { dimensionPolicy } from "@remram/contract";
import { describe, expect, it } from "vitest";
import {
  chunkGate,
  cloudPrivacyClauses,
  effectiveMinConfidence,
  eligibleTypes,
  knowledgeGate,
  knowledgeVectorGate,
  privacyClause,
  scopeClause,
  sensitivityClauses,
} from "./policy.js";

const policy = dimensionPolicy.parse({});
const principal = { userId: "ana", householdId: "home-1", agentId: "main" };
const now = "2026-11-22T12:00:00.000Z";

describe("the policy gate as OpenSearch filters", () => {
  it("admits own user items, own household items and shared items only", () => {
    expect(scopeClause(principal, policy)).toEqual({
      bool: {
        should: [
          { bool: { filter: [{ term: { scope: "user" } }, { term: { "owner.userId": "ana" } }] } },
          {
            bool: { filter: [{ term: { scope: "household" } }, { term: { "owner.householdId": "home-1" } }] },
          },
          { term: { scope: "shared" } },
        ],
        minimum_should_match: 1,
      },
    });
  });

  it("gives a principal without a household no household items", () => {
    const clause = JSON.stringify(scopeClause({ userId: "bo", agentId: "main" }, policy));
    expect(clause).not.toContain("household");
  });

  it("matches nothing when the policy allows no scope the principal has", () => {
    const userOnly = dimensionPolicy.parse({ privacy: { allowedScopes: ["household"] } });
    expect(scopeClause({ userId: "bo", agentId: "main" }, userOnly)).toEqual({
      bool: { must_not: { match_all: {} } },
    });
  });

  it("lets private items through only for their owner and secret items never", () => {
    const permissive = dimensionPolicy.parse({
      privacy: { injectableLevels: ["public", "household", "private"] },
    });
    const clause = privacyClause(principal, permissive);
    expect(clause).toEqual({
      bool: {
        should: [
          { terms: { privacy: ["public", "household"] } },
          { bool: { filter: [{ term: { privacy: "private" } }, { term: { "owner.userId": "ana" } }] } },
        ],
        minimum_should_match: 1,
      },
    });
    expect(JSON.stringify(clause)).not.toContain("secret");
  });

  it("requires consent, validity now, active status, eligible type and the confidence floor", () => {
    const gate = knowledgeGate({ principal, now, types: ["fact", "principle"], minConfidence: 0.5 }, policy);
    expect(gate).toContainEqual({ term: { status: "active" } });
    expect(gate).toContainEqual({ terms: { type: ["fact", "principle"] } });
    expect(gate).toContainEqual({ term: { "consent.retrieval": true } });
    expect(gate).toContainEqual({ terms: { "consent.agents": ["*", "main"] } });
    expect(gate).toContainEqual({ range: { "validity.validFrom": { lte: now } } });
    expect(gate).toContainEqual({ range: { confidence: { gte: 0.5 } } });
  });

  it("leaves only the confidence floor out of the gate on knowledge vectors", () => {
    const request = { principal, now, types: ["fact" as const], minConfidence: 0.5 };
    const full = knowledgeGate(request, policy);
    const vector = knowledgeVectorGate(request, policy);
    expect(vector).not.toContainEqual({ range: { confidence: { gte: 0.5 } } });
    expect(full).toEqual([...vector, { range: { confidence: { gte: 0.5 } } }]);
  });

  it("never lowers the policy's confidence floor below its own minimum", () => {
    expect(effectiveMinConfidence({ principal, now, minConfidence: 0.05 }, policy)).toBe(0.2);
  });

  it("removes types the policy excludes even when the request asks for them", () => {
    const strict = dimensionPolicy.parse({ eligibility: { excludeTypes: ["principle"] } });
    expect(eligibleTypes({ principal, now, types: ["fact", "principle"] }, strict)).toEqual(["fact"]);
  });

  it("turns dimension filters into lower-cased tag terms, one clause per dimension", () => {
    const gate = knowledgeGate(
      { principal, now, dimensionFilters: { project: ["Remram"], person: ["ana", "bo"] } },
      policy,
    );
    expect(gate).toContainEqual({ terms: { dimensionTags: ["person:ana", "person:bo"] } });
    expect(gate).toContainEqual({ terms: { dimensionTags: ["project:remram"] } });
  });

  it("keeps items holding contact details from a cloud model, and from a request that does not say", () => {
    const cloud = { bool: { must_not: { term: { sensitivity: "contact" } } } };
    expect(sensitivityClauses(undefined)).toEqual([cloud]);
    expect(sensitivityClauses("cloud")).toEqual([cloud]);
    expect(sensitivityClauses("local")).toEqual([]);
    expect(knowledgeVectorGate({ principal, now }, policy)).toContainEqual(cloud);
    expect(chunkGate({ principal, now, modelLocation: "cloud" }, policy)).toContainEqual(cloud);
    expect(knowledgeGate({ principal, now, modelLocation: "local" }, policy)).not.toContainEqual(cloud);
  });

  it("keeps private items from a cloud model unless the operator allows them there", () => {
    const noPrivate = { bool: { must_not: { term: { privacy: "private" } } } };
    expect(cloudPrivacyClauses(undefined, undefined)).toEqual([noPrivate]);
    expect(cloudPrivacyClauses("cloud", false)).toEqual([noPrivate]);
    expect(cloudPrivacyClauses("cloud", true)).toEqual([]);
    expect(cloudPrivacyClauses("local", false)).toEqual([]);
    expect(knowledgeVectorGate({ principal, now }, policy)).toContainEqual(noPrivate);
    expect(chunkGate({ principal, now, modelLocation: "cloud" }, policy)).toContainEqual(noPrivate);
    expect(knowledgeGate({ principal, now, modelLocation: "local" }, policy)).not.toContainEqual(noPrivate);
    // Contact details stay out of a cloud model even where private items may go.
    const cloudAllowed = knowledgeGate(
      { principal, now, modelLocation: "cloud", allowPrivateToCloud: true },
      policy,
    );
    expect(cloudAllowed).not.toContainEqual(noPrivate);
    expect(cloudAllowed).toContainEqual({ bool: { must_not: { term: { sensitivity: "contact" } } } });
  });

  it("keeps chunks out of a request restricted to knowledge types", () => {
    expect(chunkGate({ principal, now, types: ["fact"] }, policy)).toBeNull();
    expect(chunkGate({ principal, now }, policy)).not.toBeNull();
  });
});
