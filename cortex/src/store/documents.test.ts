import { describe, expect, it } from "vitest";
import { storedObject } from "../testing/fixtures.js";
import { gateChanged, knowledgeDocument, knowledgeWriteLines, vectorDocument } from "./documents.js";

const stored = storedObject();

describe("stored documents of a knowledge object", () => {
  it("keeps the vector out of the knowledge document and the volatile fields out of the vector document", () => {
    expect(knowledgeDocument(stored)).not.toHaveProperty("embedding");
    const vector = vectorDocument(stored, [0.1, 0.2], "minilm");
    expect(vector).toMatchObject({
      id: "k1",
      type: "fact",
      status: "active",
      scope: "household",
      owner: { householdId: "h1" },
      dimensionTags: ["place:north shed"],
      embedding: [0.1, 0.2],
      embeddingModel: "minilm",
    });
    for (const volatile of ["confidence", "usageCount", "links", "updatedAt", "statement"]) {
      expect(vector).not.toHaveProperty(volatile);
    }
  });

  it("rewrites the vector only when the gate moves, not when confidence, counters or links do", () => {
    const reinforced = {
      ...stored,
      confidence: 0.9,
      reinforcementCount: 4,
      links: [{ rel: "related" as const, targetId: "k2" }],
      updatedAt: "2026-03-02T00:00:00.000Z",
    };
    expect(gateChanged(stored, reinforced)).toBe(false);
    expect(gateChanged(stored, { ...stored, status: "demoted" })).toBe(true);
    expect(
      gateChanged(stored, {
        ...stored,
        validity: { ...stored.validity, invalidAt: "2026-03-02T00:00:00.000Z" },
      }),
    ).toBe(true);
    expect(gateChanged(stored, { ...stored, privacy: "private" })).toBe(true);
    expect(gateChanged(stored, { ...stored, dimensions: { place: ["garage"] } })).toBe(true);
  });

  it("writes the vector beside the object only when there is one", () => {
    const indices = { knowledge: "k", vectors: "v" };
    expect(knowledgeWriteLines(indices, "create", stored, null, null)).toEqual([
      { create: { _index: "k", _id: "k1" } },
      knowledgeDocument(stored),
    ]);
    expect(knowledgeWriteLines(indices, "index", stored, [1, 0], "m")).toEqual([
      { index: { _index: "k", _id: "k1" } },
      knowledgeDocument(stored),
      { index: { _index: "v", _id: "k1" } },
      vectorDocument(stored, [1, 0], "m"),
    ]);
  });

  it("marks an object or chunk holding contact details, in the knowledge, vector and chunk documents", () => {
    const contact = { ...stored, statement: "The plumber answers on +49 170 1234567" };
    expect(knowledgeDocument(stored).sensitivity).toEqual([]);
    expect(knowledgeDocument(contact).sensitivity).toEqual(["contact"]);
    expect(vectorDocument(contact, [0.1], "minilm").sensitivity).toEqual(["contact"]);
    expect(gateChanged(stored, contact)).toBe(true);
    const claimOnly = {
      ...stored,
      claim: { subject: "plumber", predicate: "email", object: "p@example.com" },
    };
    expect(knowledgeDocument(claimOnly).sensitivity).toEqual(["contact"]);
  });

  it("marks an item whose dimension values hold contact details (stored before they were redacted there)", () => {
    const dimensionOnly = { ...stored, dimensions: { person: ["plumber", "+49 170 1234567"] } };
    expect(knowledgeDocument(dimensionOnly).sensitivity).toEqual(["contact"]);
    expect(vectorDocument(dimensionOnly, [0.1], "minilm").sensitivity).toEqual(["contact"]);
    expect(knowledgeDocument({ ...stored, dimensions: { person: ["plumber"] } }).sensitivity).toEqual([]);
  });
});
