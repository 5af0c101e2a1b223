import { describe, expect, it } from "vitest";
import { decide, type RecordErasure, recordQueries } from "./erasure-records.js";
import type { StoredRecord } from "./records.js";

const erasure: RecordErasure = {
  ids: new Set(["k-alice-000001"]),
  subject: "subject-alice",
  dimensionValues: new Set(["alice-only"]),
  erasedAt: "2025-01-01T00:00:00.000Z",
};
const now = "2025-01-02T00:00:00.000Z";
const receipt = (subject: string | undefined, body: unknown): StoredRecord<unknown> => ({
  kind: "reflectReceipt",
  id: "delta",
  ...(subject !== undefined && { subject }),
  createdAt: now,
  updatedAt: now,
  body,
});
const naming = { created: ["k-alice-000001"], reinforced: [] };

describe("erasure of records", () => {
  it("empties the erased person's receipts, found by subject", () => {
    const decision = decide(receipt("subject-alice", { created: [] }), erasure, new Set(), now);
    expect(decision).toMatchObject({ op: "index", record: { body: { erased: erasure.erasedAt } } });
  });

  it("leaves another person's receipt whole even when it names an erased item", () => {
    expect(decide(receipt("subject-bob", naming), erasure, new Set(), now)).toEqual({ op: "keep" });
  });

  it("empties a receipt from before `subject` existed only when it names an erased item", () => {
    expect(decide(receipt(undefined, naming), erasure, new Set(), now).op).toBe("index");
    expect(decide(receipt(undefined, { created: ["k-bob-0000001"] }), erasure, new Set(), now)).toEqual({
      op: "keep",
    });
  });

  it("keeps a receipt emptied already", () => {
    const emptied = receipt("subject-alice", { erased: "2024-12-01T00:00:00.000Z" });
    expect(decide(emptied, erasure, new Set(), now)).toEqual({ op: "keep" });
  });

  it("deletes a proposal naming an erased item and keeps the others", () => {
    const proposal = (ids: string[]): StoredRecord<unknown> => ({
      kind: "proposal",
      id: "p",
      createdAt: now,
      updatedAt: now,
      body: { sourceKnowledgeIds: ids },
    });
    expect(decide(proposal(["k-alice-000001"]), erasure, new Set(), now)).toEqual({ op: "delete" });
    expect(decide(proposal(["k-bob-0000001"]), erasure, new Set(), now)).toEqual({ op: "keep" });
  });

  it("drops a dream report's review items and merges that name an erased item, keeping the rest", () => {
    const report = (body: unknown): StoredRecord<unknown> => ({
      kind: "dreamReport",
      id: "dream-1",
      createdAt: now,
      updatedAt: now,
      body,
    });
    const naming = {
      reviewItems: [{ objectIds: ["k-alice-000001", "k-bob-0000001"] }],
      merges: [
        { survivorId: "k-bob-0000001", mergedIds: ["k-alice-000001"] },
        { survivorId: "k-bob-0000002", mergedIds: ["k-bob-0000003"] },
      ],
    };
    expect(decide(report(naming), erasure, new Set(), now)).toMatchObject({
      op: "index",
      record: {
        body: { reviewItems: [], merges: [{ survivorId: "k-bob-0000002", mergedIds: ["k-bob-0000003"] }] },
      },
    });
    expect(decide(report({ merges: naming.merges.slice(1) }), erasure, new Set(), now)).toEqual({
      op: "keep",
    });
  });

  it("reads only the kinds that can name the person, their own receipts and subjectless ones: never audit", () => {
    const queries = JSON.stringify(recordQueries("subject-alice"));
    expect(queries).not.toContain("audit");
    expect(queries).toContain('"subject":"subject-alice"');
    expect(recordQueries("subject-alice")[0]).toEqual({ terms: { kind: ["proposal"] } });
  });

  it("a forget of single objects (no subject) reads no receipts and keeps every one", () => {
    expect(JSON.stringify(recordQueries(undefined))).not.toContain("reflectReceipt");
    const forget = { ...erasure, subject: undefined };
    expect(decide(receipt(undefined, naming), forget, new Set(), now)).toEqual({ op: "keep" });
    expect(decide(receipt("subject-alice", naming), forget, new Set(), now)).toEqual({ op: "keep" });
  });
});
