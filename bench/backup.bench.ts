/**
 * Backup and restore (POST /admin/backups, /admin/restore) on a real OpenSearch at household scale: 10k and 100k
 * knowledge objects with 384-dimension vectors, archived transcripts of the hand-written household conversations
 * with their chunks, and a workspace repository with a history. Reports how long a backup takes and how big it is,
 * /retrieve latency while it runs, and how long a restore onto a fresh Cortex takes (counts compared). Writes
 * bench/results/backup.json. Knobs: BENCH_BACKUP_SIZES (default 10000,100000), BENCH_BACKUP_TRANSCRIPTS (default
 * 100), BENCH_BACKUP_COMMITS (default 200). It measures and reports; it asserts nothing.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { BackupsResponse, RestoreStatus } from "@remram/contract";
import { startOpenSearch } from "@remram/test-harness";
import { simpleGit } from "simple-git";
import { maturationIndices } from "../cortex/src/knowledge/records.js";
import { tombstoneIndex } from "../cortex/src/knowledge/tombstones.js";
import { request } from "../cortex/src/store/client.js";
import { bearer } from "../cortex/src/testing/callers.js";
import { archiveTranscripts, householdCortex, median, millis, retrieveLatency } from "./household-stores.js";
import { seed } from "./maturation-scenarios.js";

const sizes = (process.env.BENCH_BACKUP_SIZES ?? "10000,100000").split(",").map((size) => Number(size));
const transcriptCount = Number(process.env.BENCH_BACKUP_TRANSCRIPTS ?? 100);
const commitCount = Number(process.env.BENCH_BACKUP_COMMITS ?? 200);
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");

const opensearch = await startOpenSearch();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-backup-"));

const cortexOn = (prefix: string, backupDir: string) =>
  householdCortex(opensearch.endpoints.url, scratch, prefix, { backupDir });

/** A workspace with a history: one artifact page per commit, as promotions leave it. */
async function commitHistory(workspace: string, commits: number): Promise<void> {
  mkdirSync(join(workspace, "artifacts"), { recursive: true });
  const git = simpleGit(workspace);
  await git.init();
  for (let i = 0; i < commits; i++) {
    writeFileSync(
      join(workspace, "artifacts", `page-${i % 40}.md`),
      `# Page ${i % 40}\n\nRevision ${i}: the household decided item ${i}.\n`,
    );
    await git.add(".");
    await git.raw([
      "-c",
      "user.name=Bench",
      "-c",
      "user.email=bench@remram.invalid",
      "commit",
      "-q",
      "-m",
      `page ${i}`,
    ]);
  }
}

async function until<T>(read: () => Promise<T | undefined>): Promise<T> {
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

const results: Record<string, unknown>[] = [];
try {
  for (const size of sizes) {
    const destination = join(scratch, `backups-${size}`);
    const prefix = `bench-backup-${size}-${randomBytes(3).toString("hex")}`;
    await commitHistory(join(scratch, `${prefix}-workspace`), commitCount);
    const app = await cortexOn(prefix, destination);
    const seedMs = await seed(app, size, size);
    await archiveTranscripts(app, transcriptCount);
    const idleRetrieveMs = await retrieveLatency(app);

    const backupStarted = process.hrtime.bigint();
    const started = await app.inject({ method: "POST", url: "/admin/backups", headers: bearer("operator") });
    if (started.statusCode !== 202) throw new Error(`backup answered ${started.statusCode}: ${started.body}`);
    const busyRetrievals: number[] = [];
    const backup = await until(async () => {
      const list = (
        await app.inject({ method: "GET", url: "/admin/backups", headers: bearer("operator") })
      ).json<BackupsResponse>();
      if (list.lastFailure) throw new Error(`backup failed: ${list.lastFailure.error}`);
      if (list.running !== undefined) {
        busyRetrievals.push(await retrieveLatency(app));
        return undefined;
      }
      return list.backups[0];
    });
    const backupMs = millis(backupStarted);

    const restorePrefix = `${prefix}-restored`;
    const target = await cortexOn(restorePrefix, destination);
    const restoreStarted = process.hrtime.bigint();
    const accepted = await target.inject({
      method: "POST",
      url: "/admin/restore",
      headers: bearer("admin"),
      payload: { backupId: backup.id },
    });
    if (accepted.statusCode !== 202)
      throw new Error(`restore answered ${accepted.statusCode}: ${accepted.body}`);
    const restored = await until(async () => {
      const status = (
        await target.inject({ method: "GET", url: "/admin/restore", headers: bearer("admin") })
      ).json<RestoreStatus>();
      if (status.lastFailure) throw new Error(`restore failed: ${status.lastFailure.error}`);
      return status.running === undefined ? status.last : undefined;
    });
    const restoreMs = millis(restoreStarted);

    const entry = {
      objects: size,
      transcripts: transcriptCount,
      commits: commitCount,
      seedMs: Math.round(seedMs),
      backupMs: Math.round(backupMs),
      backupBytes: backup.bytes,
      backupCounts: backup.counts,
      retrieveMedianMs: {
        idle: Math.round(idleRetrieveMs),
        duringBackup: busyRetrievals.length === 0 ? null : Math.round(median(busyRetrievals)),
      },
      restoreMs: Math.round(restoreMs),
      restoredCounts: restored?.counts,
      countsMatch: JSON.stringify(restored?.counts) === JSON.stringify(backup.counts),
    };
    console.log("backup", JSON.stringify(entry));
    results.push(entry);
    for (const cortex of [app, target]) {
      const { store } = cortex.cortex;
      for (const alias of [
        ...Object.values(store.indices),
        ...Object.values(maturationIndices(store)),
        tombstoneIndex(store),
      ]) {
        await request(store, "DELETE", `/${alias}*`, undefined, { ignore: [404] });
      }
      await cortex.close();
    }
    rmSync(destination, { recursive: true, force: true });
  }
  writeFileSync(
    join(resultsDir, "backup.json"),
    `${JSON.stringify({ benchmark: "backup", finishedAt: new Date().toISOString(), results }, null, 2)}\n`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await opensearch.stop();
}
