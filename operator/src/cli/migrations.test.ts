import type { MigrationStatus } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { formatConfirmed, formatMigrations } from "./migrations.js";

const rebuild = {
  from: "remram-knowledge-v3",
  to: "remram-knowledge-v4",
  fromTemplateVersion: 3,
  startedAt: "2026-11-28T10:00:00.000Z",
  total: 40_000,
  copied: 10_000,
};

describe("formatMigrations", () => {
  it("shows a running rebuild's progress and that writes wait", () => {
    const status: MigrationStatus = {
      templateVersion: 4,
      state: "rebuilding",
      rebuild,
      kept: [],
      keepDays: 7,
    };
    expect(formatMigrations("moltbox", status)).toBe(
      "moltbox's knowledge index is being rebuilt: remram-knowledge-v3 → remram-knowledge-v4, 10000 of 40000 documents (25 %), since 2026-11-28T10:00:00.000Z. Reads go on; writes wait until it is done.",
    );
  });

  it("says why a failed rebuild waits", () => {
    const status: MigrationStatus = {
      templateVersion: 4,
      state: "waiting",
      rebuild,
      waiting: "OpenSearch unavailable",
      kept: [],
      keepDays: 7,
    };
    expect(formatMigrations("moltbox", status)).toContain(
      "It failed and is tried again: OpenSearch unavailable",
    );
  });

  it("lists the indices kept for a rollback, until when, and how to confirm", () => {
    const status: MigrationStatus = {
      templateVersion: 4,
      state: "current",
      rebuild: { ...rebuild, copied: 40_000, finishedAt: "2026-11-28T10:05:00.000Z" },
      kept: [
        {
          index: "remram-knowledge-v3",
          replacedBy: "remram-knowledge-v4",
          replacedAt: "2026-11-28T10:05:00.000Z",
          deleteAfter: "2026-12-05T10:05:00.000Z",
        },
        { index: "remram-knowledge-v2" },
      ],
      keepDays: 7,
    };
    expect(formatMigrations("moltbox", status).split("\n")).toEqual([
      "moltbox's indices are current (template version 4).",
      "Rebuilt remram-knowledge-v3 (template v3) into remram-knowledge-v4: 40000 documents, 2026-11-28T10:00:00.000Z → 2026-11-28T10:05:00.000Z.",
      "Kept for a rollback to the release before (write-blocked):",
      "  remram-knowledge-v3 (replaced by remram-knowledge-v4), until 2026-12-05T10:05:00.000Z or until you confirm",
      "  remram-knowledge-v2, until you confirm",
      "Once the upgraded appliance works for you: kubectl remram migrations confirm --appliance moltbox",
    ]);
  });
});

describe("formatConfirmed", () => {
  it("names what was deleted, or that nothing was kept", () => {
    expect(formatConfirmed("moltbox", ["remram-knowledge-v3"])).toMatch(
      /^Deleted remram-knowledge-v3 from moltbox/,
    );
    expect(formatConfirmed("moltbox", [])).toBe("moltbox kept no index for a rollback; nothing to delete.");
  });
});
