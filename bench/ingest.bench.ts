/**
 * Ingest throughput over HTTP against real OpenSearch and Ollama, with and without embeddings.
 * Writes bench/results/ingest.json. Objects per run: BENCH_INGEST_OBJECTS (lexical, default 2000) and
 * BENCH_INGEST_EMBEDDED_OBJECTS (with embeddings, default 1000). Batches of 100 events, 2 in flight; with
 * embeddings Cortex sends them to Ollama in its configured batches (64 texts, 2 in flight).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOllama, startOpenSearch } from "@remram/test-harness";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { bulkCorpus, knowledgeEventOf } from "../cortex/test/fixtures/corpus.js";
import { runLoad } from "../cortex/test/fixtures/load.js";

const lexicalObjects = Number(process.env.BENCH_INGEST_OBJECTS ?? 2000);
const embeddedObjects = Number(process.env.BENCH_INGEST_EMBEDDED_OBJECTS ?? 1000);
const inFlight = 2;
const token = "bench-token-0123456789abcdef";
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");

const opensearch = await startOpenSearch();
const ollama = await startOllama();
try {
  const now = new Date();
  const run = async (withEmbeddings: boolean, seed: number, objects: number) => {
    const batchSize = 100;
    const config = cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      credentials: { gateway: token },
      indexPrefix: `bench-ingest-${withEmbeddings ? "vec" : "lex"}`,
      logLevel: "warn",
      port: 0,
      host: "127.0.0.1",
      ...(withEmbeddings && {
        ollamaUrl: ollama.endpoints.url,
        embedModel: ollama.endpoints.embedModel,
      }),
    });
    const app = await buildApp({ config });
    await app.cortex.initialized;
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    // Unique statements: an index number makes every fact its own text, so nothing is a duplicate or cached.
    const facts = bulkCorpus(seed, objects, Math.min(objects, 500)).facts.map((fact, index) => ({
      ...fact,
      statement: `${fact.statement} (entry ${index})`,
    }));
    const batches = Math.ceil(objects / batchSize);
    let duplicates = 0;
    const latency = await runLoad(batches, inFlight, async (batch) => {
      const events = facts
        .slice(batch * batchSize, (batch + 1) * batchSize)
        .map((fact) => knowledgeEventOf(fact, now));
      const response = await fetch(`${address}/ingest`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ events }),
      });
      if (!response.ok) throw new Error(`ingest ${response.status}: ${await response.text()}`);
      const body = (await response.json()) as { duplicates: number; embedded: boolean };
      if (withEmbeddings && !body.embedded) throw new Error("embedding failed during the benchmark");
      duplicates += body.duplicates;
    });
    await app.close();
    return {
      withEmbeddings,
      objects,
      batchSize,
      batchesInFlight: inFlight,
      objectsPerSecond: Math.round(latency.throughputPerSecond * batchSize * 10) / 10,
      batchLatency: latency,
      duplicates,
    };
  };
  const withEmbeddings = await run(true, 11, embeddedObjects);
  const lexicalOnly = await run(false, 12, lexicalObjects);
  const result = {
    benchmark: "ingest",
    finishedAt: new Date().toISOString(),
    goal: "≥ 500 objects/s with embeddings",
    embedModel: ollama.endpoints.embedModel,
    runs: [withEmbeddings, lexicalOnly],
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "ingest.json"), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
} finally {
  await ollama.stop();
  await opensearch.stop();
}
