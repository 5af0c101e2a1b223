/**
 * The latency the hooks plugin adds to a user's turn (before_model_resolve + before_prompt_build), against a
 * real Cortex on real OpenSearch and Ollama, and against a Cortex that never answers (the 250 ms cap).
 * hooks/src/tools/bench-prompt-hooks.ts does the measuring; this starts what it needs and writes
 * bench/results/hooks.json. Iterations: BENCH_HOOKS_ITERATIONS (default 200).
 */
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startOllama, startOpenSearch } from "@remram/test-harness";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";

const iterations = process.env.BENCH_HOOKS_ITERATIONS ?? "200";
const benchDir = dirname(fileURLToPath(import.meta.url));
const token = "bench-token-0123456789abcdef";

const opensearch = await startOpenSearch();
const ollama = await startOllama();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-hooks-"));
try {
  const app = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      ollamaUrl: ollama.endpoints.url,
      embedModel: ollama.endpoints.embedModel,
      credentials: { gateway: token },
      indexPrefix: "bench-hooks",
      logLevel: "warn",
    }),
  });
  await app.cortex.initialized;
  const cortexUrl = await app.listen({ host: "127.0.0.1", port: 0 });
  const statements = [
    "Alice's cat is called Miso.",
    "We decided to back the photos up to the NAS every Sunday night.",
    "Alice prefers metric units in recipes.",
    "The kids must be home by 8 pm on school nights.",
  ];
  const seeded = await app.inject({
    method: "POST",
    url: "/ingest",
    headers: { authorization: `Bearer ${token}` },
    payload: {
      events: statements.map((statement, index) => ({
        kind: "knowledge",
        provenanceKey: `bench-hooks-${index}`,
        scope: "user",
        owner: { userId: "alice" },
        type: "fact",
        source: "user",
        confidence: 0.9,
        statement,
      })),
    },
  });
  if (seeded.statusCode !== 200) throw new Error(`ingest answered ${seeded.statusCode}: ${seeded.body}`);
  const tokenFile = join(scratch, "token");
  writeFileSync(tokenFile, token, { mode: 0o600 });
  // Asynchronously: this process serves Cortex while the tool measures against it.
  const { stdout } = await promisify(execFile)(
    "tsx",
    [join(benchDir, "../hooks/src/tools/bench-prompt-hooks.ts"), iterations],
    { env: { ...process.env, CORTEX_URL: cortexUrl, CORTEX_TOKEN_FILE: tokenFile } },
  );
  const measured = JSON.parse(stdout) as Record<string, unknown>;
  writeFileSync(
    join(benchDir, "results", "hooks.json"),
    `${JSON.stringify({ ...measured, finishedAt: new Date().toISOString(), embedModel: ollama.endpoints.embedModel }, null, 2)}\n`,
  );
  console.log(JSON.stringify(measured));
  await app.close();
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await ollama.stop();
  await opensearch.stop();
}
