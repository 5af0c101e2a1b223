/**
 * The embedding itself, the same MiniLM through Ollama and in Cortex's own process (ONNX Runtime, the int8 export
 * from hack/install-embedding-onnx.sh), as Cortex's two embedders call them:
 *  1. query vectors: latency p50/p95/p99 of distinct questions at concurrency 1 and 4;
 *  2. ingest vectors: objects a second over distinct realistic texts (every turn of the pollution corpus's
 *     conversations and generated household statements), in Cortex's batches;
 *  3. agreement: the cosine similarity of the two runtimes' vectors of the same texts.
 * The in-process runtime runs with 1 and 2 threads. Writes bench/results/embedding.json.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { onnxEmbeddingModel, startOllama } from "@remram/test-harness";
import { createOllamaEmbedder, type Embedder } from "../cortex/src/store/embedder.js";
import { loadOnnxEmbedder } from "../cortex/src/store/onnx-embedder.js";
import { cosine } from "../cortex/src/testing/vectors.js";
import { bulkCorpus, loadQuestions } from "../cortex/test/fixtures/corpus.js";
import { type LatencySummary, percentile, runLoad } from "../cortex/test/fixtures/load.js";
import { loadCorpus } from "./pollution-corpus.js";

const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
const questionCount = Number(process.env.BENCH_EMBED_QUESTIONS ?? 300);
const statementCount = Number(process.env.BENCH_EMBED_STATEMENTS ?? 2_000);
const batchSize = 64;
const onnxModel = onnxEmbeddingModel();

const turns = loadCorpus().flatMap((conversation) =>
  conversation.sessions.flatMap((session) =>
    session.turns.flatMap((turn) => [turn.user, turn.assistant]).filter((text) => text.trim() !== ""),
  ),
);
const texts = [...new Set([...turns, ...bulkCorpus(20261129, statementCount, statementCount).pool])];
const questions = loadQuestions(4711, questionCount * 3);

const ollama = await startOllama();

async function measure(name: string, embedder: Embedder, questionOffset: number) {
  // Warm: the first call loads Ollama's runner, or ONNX Runtime's kernels.
  await embedder.embedMany(texts.slice(0, batchSize));
  const queries: (LatencySummary & { concurrency: number })[] = [];
  let next = questionOffset;
  for (const concurrency of [1, 4]) {
    const summary = await runLoad(questionCount / 2, concurrency, async () => {
      const question = questions[next % questions.length] ?? "";
      next += 1;
      await embedder.embedQuery(question);
    });
    queries.push(summary);
    console.log(`${name} query c=${concurrency}: ${JSON.stringify(summary)}`);
  }
  const started = performance.now();
  const vectors = await embedder.embedMany(texts);
  const seconds = (performance.now() - started) / 1000;
  const ingest = {
    texts: texts.length,
    meanChars: Math.round(texts.reduce((sum, text) => sum + text.length, 0) / texts.length),
    seconds: Math.round(seconds * 10) / 10,
    objectsPerSecond: Math.round(texts.length / seconds),
  };
  console.log(`${name} ingest: ${JSON.stringify(ingest)}`);
  return { name, queries, ingest, vectors };
}

try {
  const runs = [];
  const ollamaRun = await measure(
    "ollama",
    createOllamaEmbedder({
      url: ollama.endpoints.url,
      model: ollama.endpoints.embedModel,
      dimensions: 384,
      batchSize,
      concurrency: 2,
      queryTimeoutMs: 30_000,
      batchTimeoutMs: 600_000,
    }),
    0,
  );
  runs.push(ollamaRun);
  // Ollama's runner holds memory and threads while loaded; the in-process runs get the machine to themselves.
  await ollama.stop();
  for (const threads of [1, 2]) {
    const embedder = await loadOnnxEmbedder({
      dir: onnxModel.dir,
      model: onnxModel.name,
      dimensions: 384,
      batchSize,
      threads,
      queryTimeoutMs: 30_000,
    });
    runs.push(
      await measure(`onnx-${threads}-thread${threads > 1 ? "s" : ""}`, embedder, questionCount * threads),
    );
  }
  const onnxVectors = runs[1]?.vectors ?? [];
  const similarities = ollamaRun.vectors
    .map((vector, i) => cosine(vector, onnxVectors[i] ?? []))
    .sort((a, b) => a - b);
  const result = {
    benchmark: "embedding",
    finishedAt: new Date().toISOString(),
    models: { ollama: ollama.endpoints.embedModel, onnx: onnxModel.name },
    goals: { queryP50Ms: "well under /retrieve's 25 ms", ingestObjectsPerSecond: 500 },
    runs: runs.map(({ vectors: _vectors, ...run }) => run),
    agreement: {
      texts: similarities.length,
      minCosine: Math.round((similarities[0] ?? 0) * 10_000) / 10_000,
      p5Cosine: Math.round(percentile(similarities, 5) * 10_000) / 10_000,
      medianCosine: Math.round(percentile(similarities, 50) * 10_000) / 10_000,
    },
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "embedding.json"), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
} finally {
  await ollama.stop().catch(() => undefined);
}
