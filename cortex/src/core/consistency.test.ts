import { maxListedFindings } from "@remram/contract";
import { describe, expect, it } from "vitest";
import {
  consistencyReport,
  differingGateFields,
  findInconsistencies,
  fsckProblems,
  type StoresSnapshot,
} from "./consistency.js";

const gate = (id: string, status = "active") => ({
  id,
  status,
  privacy: "private",
  owner: { userId: "ana" },
  dimensionTags: ["topic:coffee"],
});

function sound(): StoresSnapshot {
  return {
    knowledge: new Map([
      ["k1", gate("k1")],
      ["k2", gate("k2")],
      ["k3", gate("k3", "invalidated")],
    ]),
    vectors: new Map([
      ["k1", gate("k1")],
      ["k2", gate("k2")],
    ]),
    transcriptChunks: [{ id: "c1", sourceId: "h1" }],
    chunkCount: 4,
    archived: new Set(["h1", "h2"]),
    corruptDocuments: [],
    archiveEntries: ["h1", "h2"],
    proposals: [
      { id: "p1", state: "pending", sourceKnowledgeIds: ["k1"] },
      { id: "p2", state: "promoted", sourceKnowledgeIds: ["k2"] },
      // A decided proposal may name knowledge erased since: only pending ones can still be promoted.
      { id: "p3", state: "denied", sourceKnowledgeIds: ["gone"] },
    ],
    promotedInHistory: new Set(["p2"]),
    commits: 2,
    repositoryProblems: [],
  };
}

describe("findInconsistencies", () => {
  it("finds nothing in stores that agree, and counts what awaits a vector (not a finding)", () => {
    const stores = sound();
    stores.knowledge = new Map([...stores.knowledge, ["k4", gate("k4")]]);
    expect(findInconsistencies(stores)).toEqual([]);
    const report = consistencyReport(stores, [], new Date("2026-11-28T00:00:00Z"), 12.4);
    expect(report).toMatchObject({
      consistent: true,
      durationMs: 12,
      byKind: {},
      counts: {
        knowledge: 4,
        vectors: 2,
        awaitingVector: 1,
        chunks: 4,
        archivedDocuments: 2,
        proposals: 3,
        commits: 2,
      },
    });
  });

  it("reports each kind of disagreement by id, never by content", () => {
    const stores = sound();
    stores.corruptDocuments = [{ hash: "h2", problem: "hash mismatch" }];
    stores.archived = new Set(["h2"]);
    stores.knowledge = new Map([...stores.knowledge].filter(([id]) => id !== "k2"));
    stores.vectors = new Map([
      ["k1", { ...gate("k1"), privacy: "shared" }],
      ["k2", gate("k2")],
      ["k3", gate("k3")],
    ]);
    stores.promotedInHistory = new Set();
    stores.repositoryProblems = [{ id: "a".repeat(40), detail: `missing blob ${"a".repeat(40)}` }];
    const findings = findInconsistencies(stores);
    expect(findings).toEqual([
      { kind: "archive-document-corrupt", id: "h2", detail: "hash mismatch" },
      { kind: "archive-entry-without-document", id: "h1", detail: expect.any(String) },
      { kind: "chunk-without-source", id: "c1", detail: "its transcript h1 is not in the archive" },
      {
        kind: "vector-gate-stale",
        id: "k1",
        detail: "the vector's gate differs from the object's in privacy",
      },
      { kind: "vector-without-object", id: "k2", detail: "no knowledge object has this id" },
      // An invalidated object's vector is deleted with the invalidation; one left behind is stale.
      {
        kind: "vector-gate-stale",
        id: "k3",
        detail: "the vector's gate differs from the object's in status",
      },
      { kind: "proposal-commit-missing", id: "p2", detail: expect.any(String) },
      { kind: "repository-unsound", id: "a".repeat(40), detail: `missing blob ${"a".repeat(40)}` },
    ]);
    const pending = sound();
    pending.knowledge = new Map([...pending.knowledge].filter(([id]) => id !== "k1"));
    pending.vectors = new Map([...pending.vectors].filter(([id]) => id !== "k1"));
    expect(findInconsistencies(pending)).toEqual([
      { kind: "proposal-source-missing", id: "p1", detail: "drafted from knowledge that is gone: k1" },
    ]);
  });

  it("counts every finding by kind but lists a bounded number", () => {
    const stores = sound();
    stores.vectors = new Map(
      Array.from({ length: maxListedFindings + 20 }, (_, i) => [`orphan-${i}`, gate(`orphan-${i}`)]),
    );
    const findings = findInconsistencies(stores);
    const report = consistencyReport(stores, findings, new Date(), 1);
    expect(report.consistent).toBe(false);
    expect(report.byKind).toEqual({ "vector-without-object": maxListedFindings + 20 });
    expect(report.findings).toHaveLength(maxListedFindings);
  });
});

describe("differingGateFields", () => {
  it("compares values whatever their key order, and names only fields", () => {
    expect(
      differingGateFields(
        { owner: { userId: "a", householdId: "h" } },
        { owner: { householdId: "h", userId: "a" } },
      ),
    ).toEqual([]);
    expect(
      differingGateFields({ status: "active", consent: { retrieval: true } }, { status: "active" }),
    ).toEqual(["consent"]);
  });
});

describe("fsckProblems", () => {
  it("keeps damage and drops dangling objects and notices", () => {
    const sha = "0123456789abcdef0123456789abcdef01234567";
    const output = [
      `dangling commit ${sha}`,
      "notice: HEAD points to an unborn branch (main)",
      `error: ${sha}: object corrupt or missing: .git/objects/01/23`,
      `missing blob ${sha}`,
      "",
    ].join("\n");
    expect(fsckProblems(output)).toEqual([
      { id: sha, detail: `error: ${sha}: object corrupt or missing: .git/objects/01/23` },
      { id: sha, detail: `missing blob ${sha}` },
    ]);
  });
});
