import type { ConsistencyReport } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { formatConsistencyReport } from "./check.js";

const counts = {
  knowledge: 40,
  vectors: 38,
  awaitingVector: 1,
  chunks: 12,
  archivedDocuments: 3,
  proposals: 2,
  commits: 5,
};

describe("formatConsistencyReport", () => {
  it("says what was read and that nothing is wrong", () => {
    const report: ConsistencyReport = {
      checkedAt: "2026-11-28T10:00:00.000Z",
      durationMs: 2345,
      consistent: true,
      counts,
      byKind: {},
      findings: [],
    };
    expect(formatConsistencyReport("box", report)).toBe(
      "Checked box at 2026-11-28T10:00:00.000Z in 2.3 s: 40 knowledge objects (1 awaiting a vector), 38 vectors, 12 chunks, 3 archived documents, 2 proposals, 5 commits.\nNothing wrong.",
    );
  });

  it("lists findings in columns, with the total when the list is cut", () => {
    const report: ConsistencyReport = {
      checkedAt: "2026-11-28T10:00:00.000Z",
      durationMs: 100,
      consistent: false,
      counts,
      byKind: { "vector-without-object": 150, "archive-document-corrupt": 1 },
      findings: [
        { kind: "archive-document-corrupt", id: "ab12", detail: "hash mismatch" },
        { kind: "vector-without-object", id: "k-1", detail: "no knowledge object has this id" },
      ],
    };
    const lines = formatConsistencyReport("box", report).split("\n");
    expect(lines.slice(1, 4)).toEqual([
      "151 findings (150 vector-without-object, 1 archive-document-corrupt):",
      "  archive-document-corrupt  ab12  hash mismatch",
      "  vector-without-object     k-1   no knowledge object has this id",
    ]);
    expect(lines).toContain("(the first 2 of 151; -o json gives the same report as JSON)");
  });
});
