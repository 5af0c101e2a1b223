/**
 * The consistency check (POST /admin/check) on a real OpenSearch at household scale: how long it takes over
 * 10k and 100k knowledge objects (each with a 384-dimension vector), archived transcripts of the hand-written
 * household conversations (bench/fixtures/pollution) with their chunks, and a workspace repository; once clean and
 * once with findings (which makes it read everything twice to confirm them), and what a retrieval costs while it
 * runs. Writes bench/results/consistency.json. Knobs: BENCH_CHECK_SIZES (default 10000,100000),
 * BENCH_CHECK_TRANSCRIPTS (default 100). It measures and reports; it asserts nothing.
 */
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ConsistencyReport } from "@remram/contract";
import { startOpenSearch } from "@remram/test-harness";
import type { FastifyInstance } from "fastify";
import { maturationIndices } from "../cortex/src/knowledge/records.js";
import { request } from "../cortex/src/store/client.js";
import { bearer } from "../cortex/src/testing/callers.js";
import { archiveTranscripts, householdCortex, median, millis, retrieveLatency } from "./household-stores.js";
import { corpusObject, seed } from "./maturation-scenarios.js";

const sizes = (process.env.BENCH_CHECK_SIZES ?? "10000,100000").split(",").map((size) => Number(size));
const transcriptCount = Number(process.env.BENCH_CHECK_TRANSCRIPTS ?? 100);
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");

async function check(app: FastifyInstance): Promise<{ ms: number; report: ConsistencyReport }> {
  const started = process.hrtime.bigint();
  const response = await app.inject({ method: "POST", url: "/admin/check", headers: bearer("operator") });
  if (response.statusCode !== 200) throw new Error(`check answered ${response.statusCode}: ${response.body}`);
  return { ms: millis(started), report: response.json<ConsistencyReport>() };
}

const opensearch = await startOpenSearch();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-consistency-"));
const results: Record<string, unknown>[] = [];
try {
  for (const size of sizes) {
    const prefix = `bench-check-${size}-${randomBytes(3).toString("hex")}`;
    const app = await householdCortex(opensearch.endpoints.url, scratch, prefix);
    const seedMs = await seed(app, size, size);
    const archiveMs = await archiveTranscripts(app, transcriptCount);
    const cleanRuns = [await check(app), await check(app), await check(app)];
    const clean = cleanRuns[0]?.report;
    const idleRetrieveMs = await retrieveLatency(app);
    const [during, busyRetrieveMs] = await Promise.all([check(app), retrieveLatency(app)]);

    // Ten objects lose their knowledge document and keep their vector: the check confirms them with a second read.
    const { store } = app.cortex;
    for (let i = 0; i < 10; i++) {
      await request(store, "DELETE", `/${store.indices.knowledge}/_doc/${corpusObject(i * 997).id}`);
    }
    await request(store, "POST", `/${store.indices.knowledge}/_refresh`);
    const withFindings = await check(app);

    const entry = {
      objects: size,
      transcripts: transcriptCount,
      seedMs: Math.round(seedMs),
      archiveMs: Math.round(archiveMs),
      counts: clean?.counts,
      cleanCheckMs: Math.round(median(cleanRuns.map((run) => run.ms))),
      cleanCheckRunsMs: cleanRuns.map((run) => Math.round(run.ms)),
      checkWithFindingsMs: Math.round(withFindings.ms),
      findings: withFindings.report.byKind,
      retrieveMedianMs: { idle: Math.round(idleRetrieveMs), duringCheck: Math.round(busyRetrieveMs) },
      checkDuringRetrievalsMs: Math.round(during.ms),
    };
    console.log("consistency check", JSON.stringify(entry));
    results.push(entry);
    for (const alias of [...Object.values(store.indices), ...Object.values(maturationIndices(store))]) {
      await request(store, "DELETE", `/${alias}*`, undefined, { ignore: [404] });
    }
    await app.close();
  }
  writeFileSync(
    join(resultsDir, "consistency.json"),
    `${JSON.stringify({ benchmark: "consistency", finishedAt: new Date().toISOString(), results }, null, 2)}\n`,
  );
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await opensearch.stop();
}
