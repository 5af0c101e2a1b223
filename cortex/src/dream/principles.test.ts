import { describe, expect, it } from "vitest";
import { knowledgeObject } from "../testing/fixtures.js";
import {
  clusterPatterns,
  consolidatePrinciples,
  defaultPrincipleOptions,
  findPatterns,
  principleDrafts,
  principleId,
} from "./principles.js";

const now = "2026-03-01T00:00:00.000Z";
const constraint = (id: string, sessionIds: string[], confidence = 0.7) =>
  knowledgeObject({
    id,
    type: "constraint",
    statement: `Never deploy on Fridays (${id})`,
    sessionIds,
    confidence,
  });

describe("principle consolidation", () => {
  it("turns a constraint asserted in three sessions into a principle with evidence links both ways", () => {
    const repeated = { ...constraint("k1", ["s1", "s2", "s3"], 0.75), reinforcementCount: 3 };
    const result = consolidatePrinciples([repeated], [], now);
    expect(result.created).toBe(1);
    const [principle] = result.principles;
    expect(principle).toMatchObject({
      type: "principle",
      statement: repeated.statement,
      sessionIds: ["s1", "s2", "s3"],
      links: [{ relation: "evidence", targetId: "k1" }],
    });
    expect(result.evidence[0]?.links).toEqual([{ relation: "evidenceFor", targetId: principle?.id }]);
  });

  it("clusters similar objects from different sessions into one pattern", () => {
    const members = [constraint("a", ["s1"]), constraint("b", ["s2"]), constraint("c", ["s3"])];
    const pairs = [
      { aId: "a", bId: "b", similarity: 0.86 },
      { aId: "b", bId: "c", similarity: 0.81 },
    ];
    const result = consolidatePrinciples(members, pairs, now);
    expect(result.principles).toHaveLength(1);
    expect(result.principles[0]?.links.map((l) => l.targetId)).toEqual(["a", "b", "c"]);
  });

  it("does not consolidate a pattern from one long session", () => {
    const members = [constraint("a", ["s1"]), constraint("b", ["s1"]), constraint("c", ["s1"])];
    const pairs = [
      { aId: "a", bId: "b", similarity: 0.9 },
      { aId: "a", bId: "c", similarity: 0.9 },
    ];
    expect(consolidatePrinciples(members, pairs, now).principles).toEqual([]);
  });

  it("does not consolidate low-confidence patterns", () => {
    const repeated = { ...constraint("k1", ["s1", "s2", "s3"], 0.5), reinforcementCount: 3 };
    expect(consolidatePrinciples([repeated], [], now).principles).toEqual([]);
  });

  it("never clusters across scopes", () => {
    const alice = constraint("a", ["s1", "s2"]);
    const bob = { ...constraint("b", ["s3"]), scope: { kind: "user" as const, ownerIds: ["bob"] } };
    expect(clusterPatterns([alice, bob], [{ aId: "a", bId: "b", similarity: 0.99 }], 0.8)).toHaveLength(2);
  });

  it("reinforces the existing principle instead of creating a second one, adding new evidence", () => {
    const repeated = { ...constraint("k1", ["s1", "s2", "s3"], 0.75), reinforcementCount: 3 };
    const first = consolidatePrinciples([repeated], [], now);
    const principle = first.principles[0];
    if (!principle) throw new Error("expected a principle");
    const evidence = first.evidence[0] ?? repeated;
    const newcomer = constraint("k2", ["s4"], 0.8);
    const second = consolidatePrinciples(
      [evidence, newcomer, principle],
      [{ aId: "k1", bId: "k2", similarity: 0.9 }],
      now,
    );
    expect({ created: second.created, reinforced: second.reinforced }).toEqual({ created: 0, reinforced: 1 });
    expect(second.principles[0]?.id).toBe(principle.id);
    expect(second.principles[0]?.links.map((l) => l.targetId)).toEqual(["k1", "k2"]);
  });

  it("does nothing on a re-run when no new evidence arrived", () => {
    const repeated = { ...constraint("k1", ["s1", "s2", "s3"], 0.75), reinforcementCount: 3 };
    const first = consolidatePrinciples([repeated], [], now);
    const rerun = consolidatePrinciples([...first.evidence, ...first.principles], [], now);
    expect(rerun).toEqual({ principles: [], evidence: [], deferred: [], created: 0, reinforced: 0 });
  });

  it("takes an LLM's wording when given, without it changing the decision", () => {
    const repeated = { ...constraint("k1", ["s1", "s2", "s3"], 0.75), reinforcementCount: 3 };
    const id = principleId([repeated]);
    const result = consolidatePrinciples(
      [repeated],
      [],
      now,
      undefined,
      new Map([[id, "No Friday deploys."]]),
    );
    expect(result.principles[0]?.statement).toBe("No Friday deploys.");
  });
});

describe("principle freshness", () => {
  it("refreshes a principle when its evidence is reinforced again, without adding evidence", () => {
    const repeated = { ...constraint("k1", ["s1", "s2", "s3"], 0.75), reinforcementCount: 3 };
    const first = consolidatePrinciples([repeated], [], now);
    const principle = first.principles[0];
    const evidence = first.evidence[0];
    if (!principle || !evidence) throw new Error("expected a principle and its evidence");
    const reaffirmed = { ...evidence, lastReinforcedAt: "2026-04-20T00:00:00.000Z" };
    const later = consolidatePrinciples([reaffirmed, principle], [], "2026-04-21T00:00:00.000Z");
    expect(later.reinforced).toBe(1);
    expect(later.principles[0]?.lastReinforcedAt).toBe("2026-04-20T00:00:00.000Z");
    expect(later.principles[0]?.links).toEqual(principle.links);
  });
});

describe("cluster size bound", () => {
  it("leaves a cluster larger than maxClusterSize alone: a topic, not a principle", () => {
    const members = Array.from({ length: 5 }, (_, i) => constraint(`m${i}`, [`s${i}`]));
    const pairs = members.slice(1).map((m) => ({ aId: "m0", bId: m.id, similarity: 0.9 }));
    const bounded = {
      clusterSimilarity: 0.8,
      minSessions: 3,
      minAssertions: 3,
      minConfidence: 0.6,
      maxClusterSize: 4,
      requireWording: false,
    };
    expect(consolidatePrinciples(members, pairs, now, bounded).principles).toEqual([]);
    expect(
      consolidatePrinciples(members, pairs, now, { ...bounded, maxClusterSize: 5 }).principles,
    ).toHaveLength(1);
  });
});

describe("principles that need the reflection model's wording", () => {
  const repeated = { ...constraint("k1", ["s1", "s2", "s3"], 0.75), reinforcementCount: 3 };
  const required = { ...defaultPrincipleOptions, requireWording: true };

  it("defers a new principle without a wording: nothing of it is written, not even evidence links", () => {
    const result = consolidatePrinciples([repeated], [], now, required);
    expect(result).toEqual({
      principles: [],
      evidence: [],
      created: 0,
      reinforced: 0,
      deferred: [principleId([repeated])],
    });
  });

  it("founds it with the wording given for its id", () => {
    const wording = new Map([[principleId([repeated]), "Deploys never happen on Fridays"]]);
    const result = consolidatePrinciples([repeated], [], now, required, wording);
    expect(result.created).toBe(1);
    expect(result.principles[0]?.statement).toBe("Deploys never happen on Fridays");
  });

  it("reinforces an existing principle without asking for a wording", () => {
    const first = consolidatePrinciples([repeated], [], now);
    const [principle] = first.principles;
    if (!principle) throw new Error("expected a principle");
    const newcomer = { ...constraint("k2", ["s4"], 0.75), reinforcementCount: 1 };
    const pairs = [{ aId: "k1", bId: "k2", similarity: 0.9 }];
    const later = consolidatePrinciples([...first.evidence, newcomer, principle], pairs, now, required);
    expect(later).toMatchObject({ created: 0, reinforced: 1, deferred: [] });
  });

  it("drafts each new principle with its members' statements, strongest first and each once", () => {
    const weak = { ...constraint("a", ["s1"], 0.65), statement: "No deploys on a Friday" };
    const strong = { ...constraint("b", ["s2"], 0.9), statement: "Never deploy on Fridays" };
    const twin = { ...constraint("c", ["s3"], 0.7), statement: "Never deploy on Fridays" };
    const pairs = [
      { aId: "a", bId: "b", similarity: 0.9 },
      { aId: "b", bId: "c", similarity: 0.95 },
    ];
    const drafts = principleDrafts(findPatterns([weak, strong, twin], pairs));
    expect(drafts).toEqual([
      {
        id: principleId([weak, strong, twin]),
        types: ["constraint"],
        statements: ["Never deploy on Fridays", "No deploys on a Friday"],
      },
    ]);
  });
});
