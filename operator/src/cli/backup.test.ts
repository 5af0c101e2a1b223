import type { BackupSummary } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { formatBackupDone, formatBackupList, formatRestoreDone } from "./backup.js";

const backup: BackupSummary = {
  id: "backup-20261128T033000Z-abcdef",
  takenAt: "2026-11-28T03:30:00.000Z",
  completedAt: "2026-11-28T03:30:41.000Z",
  bytes: 3_145_728,
  counts: { knowledge: 10_000, archivedDocuments: 100, commits: 200 },
  embedding: { model: "all-minilm", dimensions: 384 },
};

describe("what kubectl remram backup and restore print", () => {
  it("lists backups newest first, with a running one and the last failure", () => {
    const text = formatBackupList("box", {
      configured: true,
      running: {
        id: "backup-20261128T040000Z-123456",
        startedAt: "2026-11-28T04:00:00.000Z",
        phase: "archive",
        documentsDone: 5_000,
      },
      lastFailure: {
        id: "backup-20261127T033000Z-fedcba",
        failedAt: "2026-11-27T03:31:00.000Z",
        error: "no space left",
      },
      backups: [backup],
    });
    expect(text).toContain("1 backups of box, newest first:");
    expect(text).toContain(
      "backup-20261128T033000Z-abcdef  2026-11-28T03:30:41.000Z     3.0 MiB  10000 knowledge objects",
    );
    expect(text).toContain(
      "Running: backup-20261128T040000Z-123456 since 2026-11-28T04:00:00.000Z (archive, 5000 documents so far).",
    );
    expect(text).toContain(
      "Last failure: backup-20261127T033000Z-fedcba at 2026-11-27T03:31:00.000Z: no space left",
    );
  });

  it("says how to configure backups when the appliance has no volume", () => {
    expect(formatBackupList("box", { configured: false, backups: [] })).toBe(
      "box has no backup volume: set spec.backup.volume.claimName on the RemramAppliance.",
    );
  });

  it("reports a finished backup and a restore with its replayed erasures", () => {
    expect(formatBackupDone("box", backup, 41.2)).toMatch(/^Backed up box in 41\.2 s:/);
    const restored = formatRestoreDone("box", {
      backupId: backup.id,
      restoredAt: "2026-11-29T10:00:00.000Z",
      durationMs: 12_300,
      counts: { knowledge: 10_000, vectors: 10_000, archivedDocuments: 100, commits: 200 },
      erasuresReplayed: 1,
      forgetsReplayed: 2,
    });
    expect(restored).toContain(
      "in 12.3 s: 10000 knowledge objects, 10000 vectors, 100 archived documents, 200 commits.",
    );
    expect(restored).toContain("1 erasures made after the backup were replayed");
    expect(restored).toContain("2 knowledge objects forgotten after the backup were forgotten again.");
  });
});
