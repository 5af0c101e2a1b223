/**
 * /retrieve against real OpenSearch and Ollama:
 *  1. quality on the labelled household corpus: recall@10 and MRR for BM25 alone, vectors alone and the hybrid;
 *  2. end-to-end HTTP latency p50/p95/p99 at concurrency 1, 4 and 16, with and without the query embedding,
 *     for each corpus size in BENCH_RETRIEVE_SIZES (default "10000"; "10000,50000" for the full run, 51405 at most).
 * Writes bench/results/retrieve.json.
 *
 * The latency corpus is distinct, real text (bench/distinct-corpus.ts): the household's generated statements, then
 * sentences of the State of the Union addresses, 51,405 in all, each object its own statement and its own vector,
 * written with bulk requests. The household's questions ask it; they are all distinct, so every "with embedding"
 * request pays for its own query embedding; those runs use fewer requests for that reason.
 * Quality uses the labelled corpus sampled to BENCH_QUALITY_PER_TEMPLATE (default 5) facts per template;
 * BENCH_QUALITY_TRACES=<file> saves its candidates for bench/devset-fusion.ts.
 *
 * BENCH_EMBED_RUNTIME=onnx embeds in Cortex's process (MiniLM int8 ONNX from hack/install-embedding-onnx.sh,
 * BENCH_EMBED_THREADS threads) instead of through Ollama, and writes bench/results/retrieve-onnx.json.
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { RetrieveResponse } from "@remram/contract";
import { ingestEvent } from "@remram/contract";
import { onnxEmbeddingModel, startOllama, startOpenSearch } from "@remram/test-harness";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { planIngest } from "../cortex/src/core/ingest-plan.js";
import { request } from "../cortex/src/store/client.js";
import { knowledgeWriteLines } from "../cortex/src/store/documents.js";
import {
  bulkCorpus,
  corpusFactId,
  corpusPrincipal,
  knowledgeEventOf,
  labelledCorpus,
  loadQuestions,
} from "../cortex/test/fixtures/corpus.js";
import { type LatencySummary, percentile, runLoad } from "../cortex/test/fixtures/load.js";
import { answerRanks, rankers, summarize } from "../cortex/test/fixtures/quality.js";
import { distinctStatements, sotuTexts } from "./distinct-corpus.js";
import { tracedQuestion } from "./fusion.js";

const sizes = (process.env.BENCH_RETRIEVE_SIZES ?? "10000").split(",").map(Number);
const runtime = process.env.BENCH_EMBED_RUNTIME === "onnx" ? "onnx" : "ollama";
const onnxModel = onnxEmbeddingModel();
const embedThreads = Number(process.env.BENCH_EMBED_THREADS ?? 1);
const concurrencies = [1, 4, 16];
/** The household's generated statements at the head of the latency corpus (its templates hold about 2,700). */
const householdStatements = 2500;
const qualityPerTemplate = Number(process.env.BENCH_QUALITY_PER_TEMPLATE ?? 5);
const token = "bench-token-0123456789abcdef";
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
const now = new Date();

// In order, so each size's corpus is the first `size` statements of the largest.
const latencyStatements = distinctStatements(
  bulkCorpus(4242, 1, householdStatements).pool,
  sotuTexts(),
  Math.max(...sizes),
);

const opensearch = await startOpenSearch();
const ollama = await startOllama();

async function cortex(indexPrefix: string, withEmbeddings: boolean): Promise<FastifyInstance> {
  const app = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      credentials: { gateway: token },
      indexPrefix,
      logLevel: "warn",
      retrieveTimeoutMs: 5_000,
      embedTimeoutMs: 30_000,
      embedBatchSize: 16,
      embedBatchTimeoutMs: 600_000,
      ...(withEmbeddings &&
        (runtime === "onnx"
          ? { embedRuntime: "onnx", embedModelDir: onnxModel.dir, embedModel: onnxModel.name, embedThreads }
          : { ollamaUrl: ollama.endpoints.url, embedModel: ollama.endpoints.embedModel })),
    }),
  });
  await app.cortex.initialized;
  return app;
}

/** BENCH_QUALITY_TRACES=<file>: each question's fact candidates for bench/devset-fusion.ts. */
const qualityTraces = process.env.BENCH_QUALITY_TRACES;

async function measureQuality() {
  if (qualityTraces !== undefined) writeFileSync(qualityTraces, "");
  const app = await cortex("bench-quality", true);
  const corpus = labelledCorpus(20261122, qualityPerTemplate * 10, qualityPerTemplate);
  for (let start = 0; start < corpus.facts.length; start += 50) {
    const events = corpus.facts.slice(start, start + 50).map((fact) => knowledgeEventOf(fact, now));
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
    const rank = answerRanks(answer.trace, corpusFactId(answerKey));
    if (qualityTraces !== undefined) {
      const line = tracedQuestion(
        { kind: "single-hop", evidence: [corpusFactId(answerKey)] },
        answer.trace.items,
        "fact",
        (id) => id,
      );
      appendFileSync(qualityTraces, `${JSON.stringify(line)}\n`);
    }
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
async function loadCorpus(app: FastifyInstance, size: number) {
  const started = performance.now();
  const { store, embedder } = app.cortex;
  if (embedder === null) throw new Error("the loader needs the embedder");
  const statements = latencyStatements.slice(0, size);
  let embedSeconds = 0;
  for (let start = 0; start < statements.length; start += 1000) {
    const slice = statements.slice(start, start + 1000);
    const embedStarted = performance.now();
    const vectors = await embedder.embedMany(slice);
    embedSeconds += (performance.now() - embedStarted) / 1000;
    // Confidence and age spread over the corpus, so the ranking's confidence and recency terms vary as they would.
    const events = slice.map((statement, offset) => {
      const index = start + offset;
      const fact = { key: `bulk-${index}`, statement, type: "fact" as const, dimensions: {} };
      return ingestEvent.parse(
        knowledgeEventOf({ ...fact, confidence: 0.5 + (index % 45) / 100, ageDays: index % 720 }, now),
      );
    });
    const lines: unknown[] = [];
    planIngest(events, { privacy: "household", now: now.toISOString() }).forEach((item, position) => {
      if (item.knowledge === null) return;
      lines.push(
        ...knowledgeWriteLines(
          store.indices,
          "create",
          item.knowledge,
          vectors[position] ?? null,
          embedder.model,
        ),
      );
    });
    await request(store, "POST", "/_bulk", lines, { ndjson: true, timeoutMs: 300_000 });
  }
  await request(store, "POST", `/${store.indices.knowledge},${store.indices.vectors}/_refresh`, undefined, {
    timeoutMs: 300_000,
  });
  const round = (seconds: number) => Math.round(seconds * 10) / 10;
  return {
    distinctStatements: statements.length,
    embedPerSecond: Math.round(statements.length / embedSeconds),
    embedSeconds: round(embedSeconds),
    totalSeconds: round((performance.now() - started) / 1000),
  };
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
    for (let warm = 0; warm < (queryEmbedding ? 3 : 30); warm += 1) await call();
    for (const concurrency of concurrencies) {
      let degraded = 0;
      const requests = queryEmbedding
        ? concurrency * (concurrency === 1 ? 30 : 15)
        : concurrency === 1
          ? 200
          : 400;
      const summary = await runLoad(requests, concurrency, async () => {
        if (await call()) degraded += 1;
      });
      runs.push({ ...summary, queryEmbedding, degraded });
      console.log(`size ${size} embedding ${queryEmbedding} c=${concurrency}: ${JSON.stringify(summary)}`);
    }
  }
  // Where a request's time goes (Cortex's own trace, `debug: true`), median per step over 30 sequential requests.
  const steps: Record<string, number[]> = {};
  for (let sample = 0; sample < 30; sample += 1) {
    const response = await withVectors.inject({
      method: "POST",
      url: "/retrieve",
      headers: { authorization: `Bearer ${token}` },
      payload: {
        principal: corpusPrincipal,
        requestText: questions[sample] ?? "",
        tokenBudget: 800,
        debug: true,
      },
    });
    for (const [step, ms] of Object.entries(response.json<RetrieveResponse>().trace?.timingsMs ?? {}))
      steps[step] = [...(steps[step] ?? []), ms];
  }
  const stepsMs = Object.fromEntries(
    Object.entries(steps).map(([step, values]) => [
      step,
      percentile(
        [...values].sort((a, b) => a - b),
        50,
      ),
    ]),
  );
  console.log(`size ${size} steps (median ms): ${JSON.stringify(stepsMs)}`);
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
    stepsMs,
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
    goals: { p50Ms: 25, p95Ms: 60, at: "50k distinct statements or more, concurrency 4" },
    embedModel: runtime === "onnx" ? onnxModel.name : ollama.endpoints.embedModel,
    embedRuntime: runtime === "onnx" ? { runtime, threads: embedThreads } : { runtime },
    quality,
    latency,
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(
    join(resultsDir, runtime === "onnx" ? "retrieve-onnx.json" : "retrieve.json"),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  console.log(JSON.stringify(result, null, 2));
} finally {
  await ollama.stop();
  await opensearch.stop();
}
