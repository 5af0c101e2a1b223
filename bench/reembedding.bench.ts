/**
 * Re-embedding after an embedding-model change, on real OpenSearch and Ollama: a household's knowledge (distinct
 * statements from the test corpus) and archived transcripts with their chunks, stored under a previous model's
 * generation, then a Cortex started with the test bed's MiniLM. Reports how long start-up takes (the chunks are
 * copied into their new index then), how long the fill takes and at what rate, and /retrieve latency while it runs
 * and after. The previous model's vectors themselves are not made (their cost is not what is measured): the
 * indices are stamped as that model's. Writes bench/results/reembedding.json. Knobs: BENCH_REEMBED_OBJECTS
 * (default 10000), BENCH_REEMBED_TRANSCRIPTS (default 100). It measures and reports; it asserts nothing.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { EmbeddingStatus } from "@remram/contract";
import { startOllama, startOpenSearch } from "@remram/test-harness";
import type { FastifyInstance } from "fastify";
import { request } from "../cortex/src/store/client.js";
import { aliasedIndices, writeEmbeddingMeta } from "../cortex/src/store/generations.js";
import { bearer } from "../cortex/src/testing/callers.js";
import {
  archiveTranscripts,
  dropHousehold,
  householdCortex,
  ingestBulkFacts,
  median,
  millis,
  retrieveLatency,
  writeResult,
} from "./household-stores.js";

const objects = Number(process.env.BENCH_REEMBED_OBJECTS ?? 10_000);
const transcripts = Number(process.env.BENCH_REEMBED_TRANSCRIPTS ?? 100);

const opensearch = await startOpenSearch();
const ollama = await startOllama();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-reembed-"));
const prefix = "bench-reembed";

async function status(app: FastifyInstance): Promise<EmbeddingStatus> {
  const response = await app.inject({ method: "GET", url: "/admin/embeddings", headers: bearer("operator") });
  return response.json<EmbeddingStatus>();
}

try {
  // The household as the previous model left it: stored lexically here, then stamped as that model's.
  const before = await householdCortex(opensearch.endpoints.url, scratch, prefix);
  await ingestBulkFacts(before, objects);
  await archiveTranscripts(before, transcripts);
  const { store } = before.cortex;
  for (const alias of [store.indices.vectors, store.indices.chunks]) {
    for (const index of await aliasedIndices(store, alias)) {
      await writeEmbeddingMeta(store, index, { model: "previous-model", dimensions: 384, complete: true });
    }
  }
  const { body: chunkCount } = await request<{ count: number }>(
    store,
    "GET",
    `/${store.indices.chunks}/_count`,
  );
  await before.close();

  const startupStarted = process.hrtime.bigint();
  const app = await householdCortex(opensearch.endpoints.url, scratch, prefix, {
    ollamaUrl: ollama.endpoints.url,
    embedModel: ollama.endpoints.embedModel,
  });
  const startupMs = millis(startupStarted);
  const fillStarted = process.hrtime.bigint();
  const during: number[] = [];
  let last = await status(app);
  while (last.state === "reembedding") {
    during.push(await retrieveLatency(app));
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    last = await status(app);
  }
  const fillMs = millis(fillStarted);
  const after = await retrieveLatency(app);
  const items = last.objects.total + last.chunks.total;
  const entry = {
    objects: last.objects.total,
    chunks: last.chunks.total,
    chunksStored: chunkCount.count,
    model: last.model,
    startupMs: Math.round(startupMs),
    fillMs: Math.round(fillMs),
    itemsPerSecond: Math.round((items / fillMs) * 1000),
    retrieveMedianMs: {
      duringFill: during.length === 0 ? null : Math.round(median(during)),
      after: Math.round(after),
    },
    finalState: last.state,
  };
  writeResult("reembedding", entry);
  await dropHousehold(app);
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await ollama.stop();
  await opensearch.stop();
}
