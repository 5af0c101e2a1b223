/**
 * The knowledge index rebuild an upgrade from template 3 starts, on real OpenSearch: a household's knowledge
 * (distinct statements from the test corpus) stored by this Cortex, its index put back to template 3 as the
 * previous release built it, then a Cortex started on it. Reports start-up time (Cortex is ready before the
 * rebuild), how long the rebuild takes and at what rate, /retrieve latency while it runs and after, and what a
 * write meets meanwhile. Lexical only: the rebuild copies knowledge documents, never vectors. Writes
 * bench/results/knowledge-rebuild.json. Knob: BENCH_REBUILD_OBJECTS (default 100000). It asserts nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { MigrationStatus } from "@remram/contract";
import { startOpenSearch } from "@remram/test-harness";
import type { FastifyInstance } from "fastify";
import { bearer } from "../cortex/src/testing/callers.js";
import { downgradeKnowledgeIndex } from "../cortex/src/testing/previous-knowledge-index.js";
import { knowledgeEvent } from "../cortex/test/helpers.js";
import {
  dropHousehold,
  householdCortex,
  ingestBulkFacts,
  median,
  millis,
  retrieveLatency,
  writeResult,
} from "./household-stores.js";

const objects = Number(process.env.BENCH_REBUILD_OBJECTS ?? 100_000);

const opensearch = await startOpenSearch();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-rebuild-"));
const prefix = "bench-rebuild";

async function status(app: FastifyInstance): Promise<MigrationStatus> {
  const response = await app.inject({ method: "GET", url: "/admin/migrations", headers: bearer("operator") });
  return response.json<MigrationStatus>();
}

try {
  const before = await householdCortex(opensearch.endpoints.url, scratch, prefix);
  const ingestStarted = process.hrtime.bigint();
  await ingestBulkFacts(before, objects);
  const ingestMs = millis(ingestStarted);
  const previous = await downgradeKnowledgeIndex(before.cortex.store);
  await before.close();

  const startupStarted = process.hrtime.bigint();
  const app = await householdCortex(opensearch.endpoints.url, scratch, prefix);
  const startupMs = millis(startupStarted);
  const rebuildStarted = process.hrtime.bigint();
  const during: number[] = [];
  const writeStatuses = new Set<number>();
  let last = await status(app);
  while (last.state !== "current") {
    during.push(await retrieveLatency(app));
    const write = await app.inject({
      method: "POST",
      url: "/ingest",
      headers: bearer("gateway"),
      payload: {
        events: [
          knowledgeEvent("ana", `during-${during.length}`, "Ana's library card is in the hall drawer"),
        ],
      },
    });
    writeStatuses.add(write.statusCode);
    await new Promise((resolve) => setTimeout(resolve, 1_000));
    last = await status(app);
  }
  const rebuildMs = millis(rebuildStarted);
  const after = await retrieveLatency(app);
  const copied = last.rebuild?.copied ?? 0;
  const entry = {
    objects,
    documentsCopied: copied,
    from: previous,
    to: last.rebuild?.to,
    ingestMs: Math.round(ingestMs),
    startupMs: Math.round(startupMs),
    rebuildMs: Math.round(rebuildMs),
    documentsPerSecond: Math.round((copied / rebuildMs) * 1000),
    retrieveMedianMs: {
      duringRebuild: during.length === 0 ? null : Math.round(median(during)),
      after: Math.round(after),
    },
    writeStatusesDuringRebuild: [...writeStatuses].sort(),
  };
  writeResult("knowledge-rebuild", entry);
  await dropHousehold(app);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await opensearch.stop();
}
