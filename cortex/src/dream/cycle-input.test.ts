import { describe, expect, it } from "vitest";
import { knowledgeObject, storedObject } from "../testing/fixtures.js";
import { candidateStats, governanceKeys } from "./cycle-input.js";

describe("cycle input", () => {
  it("gives each candidate the mean confidence of the live objects carrying it", () => {
    const objects = [
      knowledgeObject({ id: "a", confidence: 0.9, dimensions: { zone: ["north"] } }),
      knowledgeObject({ id: "b", confidence: 0.5, dimensions: { zone: ["south"], empty: [] } }),
    ];
    const candidate = (name: string) => ({
      name,
      occurrences: 4,
      sampleValues: ["north"],
      firstSeenAt: "2026-01-01T00:00:00.000Z",
      lastSeenAt: "2026-01-02T00:00:00.000Z",
    });
    expect(candidateStats([candidate("zone"), candidate("empty")], objects)).toEqual([
      { name: "zone", occurrences: 4, meanConfidence: 0.7, values: ["north"] },
      { name: "empty", occurrences: 4, meanConfidence: 0, values: ["north"] },
    ]);
  });

  it("keys governance by privacy and consent, agents in any order", () => {
    const keys = governanceKeys([
      storedObject({ id: "a", consent: { retrieval: true, agents: ["main", "kids"] } }),
      storedObject({ id: "b", consent: { retrieval: true, agents: ["kids", "main"] } }),
      storedObject({ id: "c", privacy: "private" }),
    ]);
    expect(keys.get("a")).toBe(keys.get("b"));
    expect(keys.get("c")).not.toBe(keys.get("a"));
  });
});
