import type { MigrationStatus } from "@remram/contract";
import { describe, expect, it } from "vitest";
import {
  keptPollMs,
  migrationsCondition,
  migrationsPollMs,
  migrationsStatus,
  movingPollMs,
  settledPollMs,
} from "./migration-watch.js";
import { watchHarness } from "./testing/cortex-watch.js";

const rebuild = {
  from: "remram-knowledge-v3",
  to: "remram-knowledge-v4-r1",
  fromTemplateVersion: 3,
  startedAt: "2026-11-29T02:00:00.000Z",
  total: 100_000,
  copied: 25_000,
};
const rebuilding: MigrationStatus = {
  templateVersion: 4,
  state: "rebuilding",
  rebuild,
  kept: [],
  keepDays: 7,
};
const kept: MigrationStatus = {
  templateVersion: 4,
  state: "current",
  rebuild: { ...rebuild, copied: 100_000, finishedAt: "2026-11-29T02:01:00.000Z" },
  kept: [
    {
      index: "remram-knowledge-v3",
      replacedBy: "remram-knowledge-v4-r1",
      replacedAt: "2026-11-29T02:01:00.000Z",
      deleteAfter: "2026-12-06T02:01:00.000Z",
    },
  ],
  keepDays: 7,
};
const settled: MigrationStatus = { templateVersion: 4, state: "current", kept: [], keepDays: 7 };

const harness = () => watchHarness(migrationsStatus, migrationsPollMs);

describe("index migrations, as status and the IndexesCurrent condition", () => {
  it("is False with the copy's progress while the knowledge index is rebuilt", () => {
    const status = migrationsStatus(rebuilding);
    expect(status).toEqual({
      templateVersion: 4,
      state: "rebuilding",
      rebuilding: {
        from: "remram-knowledge-v3",
        to: "remram-knowledge-v4-r1",
        copied: 25_000,
        total: 100_000,
      },
      kept: [],
    });
    expect(migrationsCondition(status)).toEqual({
      type: "IndexesCurrent",
      status: "False",
      reason: "RebuildingIndex",
      message:
        "rebuilding the knowledge index for index template 4 (remram-knowledge-v3 to remram-knowledge-v4-r1: 25000 of 100000, 25%); reads are served, writes wait until it ends",
    });
  });

  it("says why a failed rebuild waits, and that reads go on", () => {
    const condition = migrationsCondition(
      migrationsStatus({ ...rebuilding, state: "waiting", waiting: "the copy held 99 of 100 documents" }),
    );
    expect(condition).toMatchObject({ status: "False", reason: "RebuildWaiting" });
    expect(condition.message).toContain("failed and is tried again");
    expect(condition.message).toContain(
      "the copy held 99 of 100 documents; reads are served from the old index",
    );
  });

  it("is True once done, naming what is kept for a rollback and until when", () => {
    const status = migrationsStatus(kept);
    // A finished rebuild is history: status shows no copy running.
    expect(status).not.toHaveProperty("rebuilding");
    expect(migrationsCondition(status)).toEqual({
      type: "IndexesCurrent",
      status: "True",
      reason: "IndexesCurrent",
      message:
        "every index is on index template 4; kept for a helm rollback: remram-knowledge-v3 until 2026-12-06T02:01:00.000Z (kubectl remram migrations confirm deletes them)",
    });
    const unknownAge = migrationsStatus({ ...kept, kept: [{ index: "remram-knowledge-v2" }] });
    expect(migrationsCondition(unknownAge).message).toContain("remram-knowledge-v2 until an admin confirms");
    expect(migrationsCondition(migrationsStatus(settled)).message).toBe("every index is on index template 4");
    expect(migrationsCondition(undefined)).toMatchObject({ status: "Unknown", reason: "NotCheckedYet" });
    expect(migrationsCondition(migrationsStatus({ ...settled, state: "starting" })).status).toBe("Unknown");
  });

  it("asks every 15 s while a rebuild runs, every minute while indices are kept, hourly after", () => {
    expect(migrationsPollMs(undefined)).toBe(movingPollMs);
    expect(migrationsPollMs(migrationsStatus(rebuilding))).toBe(movingPollMs);
    expect(migrationsPollMs(migrationsStatus(kept))).toBe(keptPollMs);
    expect(migrationsPollMs(migrationsStatus(settled))).toBe(settledPollMs);
  });

  it("asks again as soon as Cortex is back after being unavailable (a new release may migrate)", async () => {
    const t = harness();
    t.answers.push(settled);
    t.observe(undefined);
    await t.flush();
    const before = t.observe(undefined);
    expect(before.nextInMs).toBe(settledPollMs);
    // Cortex's pod is replaced (helm upgrade, Recreate): not asked while it is down, asked at once when it is back.
    t.advance(30_000);
    expect(t.observe(before.status, false)).not.toHaveProperty("nextInMs");
    expect(t.asked()).toBe(1);
    t.answers.push(rebuilding);
    t.observe(before.status);
    expect(t.asked()).toBe(2);
    await t.flush();
    const after = t.observe(before.status);
    expect(migrationsCondition(after.status).reason).toBe("RebuildingIndex");
    expect(after.nextInMs).toBe(movingPollMs);
  });
});
