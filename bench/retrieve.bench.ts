/**
 * /retrieve against real OpenSearch and Ollama:
 *  1. quality on the labelled household corpus: recall@10 and MRR for BM25 alone, vectors alone and the hybrid;
 *  2. end-to-end HTTP latency p50/p95/p99 at concurrency 1, 4 and 16, with and without the query embedding,
 *     for each corpus size in BENCH_RETRIEVE_SIZES (default "10000"; "10000,100000" for the full run).
 * Writes bench/results/retrieve.json.
 *
 * The latency corpus repeats about 2,700 distinct generated statements (each object gets its own "ref" suffix),
 * so the bench embeds each distinct statement once and writes the objects with bulk requests; queries are all
 * distinct, so every "with embedding" request pays for its own query embedding.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOllama, startOpenSearch } from "@remram/test-harness";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { knowledgeIdFor, planIngest } from "../cortex/src/core/ingest-plan.js";
import { ingestEvent } from "../cortex/src/schemas/ingest.js";
import type { RetrieveResponse } from "../cortex/src/schemas/retrieve.js";
import { request, toIndexDocument } from "../cortex/src/store/opensearch.js";
import {
  bulkCorpus,
  type CorpusFact,
  corpusPrincipal,
  knowledgeEventOf,
  labelledCorpus,
  loadQuestions,
} from "../cortex/test/fixtures/corpus.js";
import { type LatencySummary, runLoad } from "../cortex/test/fixtures/load.js";
import { answerRanks, rankers, summarize } from "../cortex/test/fixtures/quality.js";

const sizes = (process.env.BENCH_RETRIEVE_SIZES ?? "10000").split(",").map(Number);
const concurrencies = [1, 4, 16];
const token = "bench-token-0123456789abcdef";
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
const now = new Date();

const opensearch = await startOpenSearch({ heap: "1g" });
const ollama = await startOllama();

async function cortex(indexPrefix: string, withEmbeddings: boolean): Promise<FastifyInstance> {
  const app = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      token,
      indexPrefix,
      logLevel: "warn",
      retrieveTimeoutMs: 5_000,
      embedTimeoutMs: 5_000,
      ...(withEmbeddings && { ollamaUrl: ollama.endpoints.url, embedModel: ollama.endpoints.embedModel }),
    }),
  });
  await app.cortex.initialized;
  return app;
}

async function measureQuality() {
  const app = await cortex("bench-quality", true);
  const corpus = labelledCorpus(20261122, 1700);
  for (let start = 0; start < corpus.facts.length; start += 200) {
    const events = corpus.facts.slice(start, start + 200).map((fact) => knowledgeEventOf(fact, now));
    const response = await app.inject({
      method: "POST",
      url: "/ingest",
      headers: { authorization: `Bearer ${token}` },
      payload: { events },
    });
    if (response.statusCode !== 200) throw new Error(`ingest ${response.statusCode}: ${response.body}`);
  }
  const ranks: Record<string, (number | null)[]> = { bm25: [], vector: [], hybrid: [] };
  for (const { question, answerKey } of corpus.questions) {
    const response = await app.inject({
      method: "POST",
      url: "/retrieve",
      headers: { authorization: `Bearer ${token}` },
      payload: {
        principal: corpusPrincipal,
        requestText: question,
        tokenBudget: 600,
        mode: "deep",
        debug: true,
      },
    });
    const answer = response.json<RetrieveResponse>();
    if (answer.trace === undefined || answer.degraded)
      throw new Error(`quality run degraded: ${answer.degradedReasons.join("; ")}`);
    const rank = answerRanks(answer.trace, knowledgeIdFor(answerKey));
    for (const ranker of rankers) ranks[ranker]?.push(rank[ranker]);
  }
  await app.close();
  return {
    corpusObjects: corpus.facts.length,
    questions: corpus.questions.length,
    ...Object.fromEntries(rankers.map((ranker) => [ranker, summarize(ranks[ranker] ?? [])])),
  };
}

/** Write `size` objects straight through the store (same planner and document shape as /ingest). */
async function loadCorpus(
  app: FastifyInstance,
  size: number,
): Promise<{ seconds: number; distinctTexts: number }> {
  const started = performance.now();
  const { store, embedder } = app.cortex;
  if (embedder === null) throw new Error("the loader needs the embedder");
  const vectors = new Map<string, number[]>();
  let batch: unknown[] = [];
  const flush = async () => {
    if (batch.length === 0) return;
    await request(store, "POST", "/_bulk", batch, { ndjson: true, timeoutMs: 120_000 });
    batch = [];
  };
  let pendingFacts: { fact: CorpusFact; index: number }[] = [];
  const writePending = async () => {
    const missing = [
      ...new Set(pendingFacts.map(({ fact }) => fact.statement).filter((text) => !vectors.has(text))),
    ];
    if (missing.length > 0) {
      const embedded = await embedder.embedMany(missing);
      missing.forEach((text, position) => {
        vectors.set(text, embedded[position] ?? []);
      });
    }
    const events = pendingFacts.map(({ fact, index }) =>
      ingestEvent.parse({ ...knowledgeEventOf(fact, now), statement: `${fact.statement} (ref ${index})` }),
    );
    const planned = planIngest(events, { privacy: "household", now: now.toISOString() });
    planned.forEach((item, position) => {
      const knowledge = item.knowledge;
      const fact = pendingFacts[position]?.fact;
      if (knowledge === null || fact === undefined) return;
      batch.push(
        { create: { _index: store.indices.knowledge, _id: knowledge.id } },
        toIndexDocument(knowledge, vectors.get(fact.statement) ?? null, embedder.model),
      );
    });
    pendingFacts = [];
    await flush();
  };
  let index = 0;
  for (const fact of bulkCorpus(4242, size)) {
    pendingFacts.push({ fact, index });
    index += 1;
    if (pendingFacts.length === 1000) await writePending();
  }
  await writePending();
  await request(store, "POST", `/${store.indices.knowledge}/_refresh`);
  return { seconds: Math.round((performance.now() - started) / 100) / 10, distinctTexts: vectors.size };
}

async function measureLatency(size: number) {
  const prefix = `bench-latency-${size}`;
  const withVectors = await cortex(prefix, true);
  const load = await loadCorpus(withVectors, size);
  const lexical = await cortex(prefix, false);
  const questions = loadQuestions(size, 20_000);
  let questionIndex = 0;
  const runs: (LatencySummary & { queryEmbedding: boolean; degraded: number })[] = [];
  for (const [queryEmbedding, app] of [
    [true, withVectors],
    [false, lexical],
  ] as const) {
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    const call = async (): Promise<boolean> => {
      const requestText = questions[questionIndex % questions.length] ?? "";
      questionIndex += 1;
      const response = await fetch(`${address}/retrieve`, {
        method: "POST",
        headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
        body: JSON.stringify({ principal: corpusPrincipal, requestText, tokenBudget: 800 }),
      });
      const answer = (await response.json()) as RetrieveResponse;
      return answer.degraded;
    };
    for (let warm = 0; warm < 30; warm += 1) await call();
    for (const concurrency of concurrencies) {
      let degraded = 0;
      const summary = await runLoad(concurrency === 1 ? 200 : 400, concurrency, async () => {
        if (await call()) degraded += 1;
      });
      runs.push({ ...summary, queryEmbedding, degraded });
      console.log(`size ${size} embedding ${queryEmbedding} c=${concurrency}: ${JSON.stringify(summary)}`);
    }
  }
  const segments = await request<{ indices: Record<string, { primaries: { segments: { count: number } } }> }>(
    withVectors.cortex.store,
    "GET",
    `/${withVectors.cortex.store.indices.knowledge}/_stats/segments`,
  );
  await lexical.close();
  await withVectors.close();
  return {
    objects: size,
    load,
    segments: Object.values(segments.body.indices)[0]?.primaries.segments.count ?? null,
    runs,
  };
}

try {
  const quality = await measureQuality();
  console.log(`quality: ${JSON.stringify(quality)}`);
  const latency = [];
  for (const size of sizes) latency.push(await measureLatency(size));
  const result = {
    benchmark: "retrieve",
    finishedAt: new Date().toISOString(),
    goals: { p50Ms: 25, p95Ms: 60, at: "100k objects, concurrency 4" },
    embedModel: ollama.endpoints.embedModel,
    quality,
    latency,
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "retrieve.json"), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
} finally {
  await ollama.stop();
  await opensearch.stop();
}
