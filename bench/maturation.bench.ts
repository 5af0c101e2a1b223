/**
 * Reflection, dream and archive throughput on a real OpenSearch (no Ollama: objects carry random vectors, so the
 * k-NN neighbour lookups of dream are exercised). Writes bench/results/maturation.json.
 * Dream sizes: BENCH_DREAM_SIZES (comma-separated object counts, default 10000); vectors for the first
 * BENCH_DREAM_VECTORS objects (default all); BENCH_DREAM_ONLY=1 skips the reflection and archive parts.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { startOpenSearch } from "@remram/test-harness";
import { runMaturationBenchmarks } from "./maturation-scenarios.js";

const sizes = (process.env.BENCH_DREAM_SIZES ?? "10000").split(",").map((size) => Number.parseInt(size, 10));
const vectorLimit = Number(process.env.BENCH_DREAM_VECTORS ?? Number.POSITIVE_INFINITY);
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");

const opensearch = await startOpenSearch();
const scratchDir = mkdtempSync(join(tmpdir(), "remram-bench-maturation-"));
try {
  const results = await runMaturationBenchmarks({
    opensearchUrl: opensearch.endpoints.url,
    scratchDir,
    sizes,
    vectorLimit,
    dreamOnly: process.env.BENCH_DREAM_ONLY === "1",
    log: (message, data) => console.log(message, JSON.stringify(data)),
  });
  // A dream-only run has its own file, so it does not replace the reflection and archive numbers of a full one.
  const dreamOnly = process.env.BENCH_DREAM_ONLY === "1";
  writeFileSync(
    join(resultsDir, dreamOnly ? "maturation-dream.json" : "maturation.json"),
    `${JSON.stringify({ benchmark: "maturation", finishedAt: new Date().toISOString(), ...results }, null, 2)}\n`,
  );
} finally {
  rmSync(scratchDir, { recursive: true, force: true });
  await opensearch.stop();
}
