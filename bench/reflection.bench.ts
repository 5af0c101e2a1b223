/**
 * What reflection stores from a realistic conversation: the scripted household conversation of
 * bench/reflection-script.ts, turn by turn through the plugin's own reflection path (the bundle Cortex retrieves for
 * the turn, the facts it shows as the reflection's targets, the plugin's prompt, the reply held to the delta's
 * grammar by Ollama's `format`, the plugin's parsing with one retry of a malformed reply, and Cortex's /reflect on a
 * real OpenSearch), without the OpenClaw gateway around it. Reports, per 100 turns, each kind of delta part the
 * plugin queued and each kind of write Cortex made, and the reflection latency. Writes bench/results/reflection.json.
 * Model: BENCH_REFLECTION_MODEL (default the test bed's chat model, SmolLM2-135M, sampled with its Modelfile's
 * defaults through Ollama's native API, as the operator configures reflection); reply cap:
 * BENCH_REFLECTION_OUTPUT_TOKENS (default 1024); turns: BENCH_REFLECTION_TURNS (default the whole script, repeated
 * as needed).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { ReflectResponse } from "@remram/contract";
import { startOllama, startOpenSearch } from "@remram/test-harness";
import { Ollama } from "ollama";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { maturationPlugin } from "../cortex/src/maturation.js";
import { RetrieveResponseSchema } from "../hooks/src/cortex-contract.js";
import { isInjectedStatement } from "../hooks/src/injected-content.js";
import {
  buildReflectionJob,
  reflectionInstructions,
  reflectionMessage,
  reflectionResponseFormat,
} from "../hooks/src/reflection.js";
import { reflectionReplyAction } from "../hooks/src/reflection-reply.js";
import { shownTargets } from "../hooks/src/reflection-targets.js";
import { script, seed } from "./reflection-script.js";

const benchDir = dirname(fileURLToPath(import.meta.url));
const token = "bench-token-0123456789abcdef";
const headers = { authorization: `Bearer ${token}` };
const principal = { userId: "alice", householdId: "h1", agentId: "main" };
const turns = Number(process.env.BENCH_REFLECTION_TURNS ?? script.length);
/** Default: the operator's floor for a reflection reply (operator/src/appliance/openclaw-config.ts). */
const outputTokens = Number(process.env.BENCH_REFLECTION_OUTPUT_TOKENS ?? 1024);

const add = (counts: Record<string, number>, label: string, by = 1) => {
  if (by > 0) counts[label] = (counts[label] ?? 0) + by;
};
const per100 = (counts: Record<string, number>) =>
  Object.fromEntries(
    Object.entries(counts)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([label, count]) => [label, Math.round((count / turns) * 10_000) / 100]),
  );
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

const opensearch = await startOpenSearch();
const ollamaService = await startOllama();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-reflection-"));
try {
  const model = process.env.BENCH_REFLECTION_MODEL ?? ollamaService.endpoints.chatModel;
  const ollama = new Ollama({ host: ollamaService.endpoints.url });
  const app = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      ollamaUrl: ollamaService.endpoints.url,
      embedModel: ollamaService.endpoints.embedModel,
      credentials: { gateway: token },
      indexPrefix: `bench-reflection-${Date.now()}`,
      logLevel: "warn",
    }),
    plugins: [
      maturationPlugin({
        workspaceDir: join(scratch, "workspace"),
        archiveDir: join(scratch, "archive"),
        gitAuthor: { name: "Remram bench", email: "bench@remram.invalid" },
      }),
    ],
  });
  await app.cortex.initialized;
  const post = async (url: string, payload: unknown) => {
    const response = await app.inject({ method: "POST", url, headers, payload: payload as object });
    return { status: response.statusCode, body: response.body };
  };
  const seeded = await post("/ingest", {
    events: seed.map((object, index) => ({
      kind: "knowledge",
      provenanceKey: `bench-reflection-seed-${index}`,
      scope: object.scope,
      owner: object.scope === "user" ? { userId: "alice" } : { householdId: "h1" },
      type: object.type,
      source: "user",
      confidence: 0.7,
      statement: object.statement,
    })),
  });
  if (seeded.status !== 200) throw new Error(`ingest answered ${seeded.status}: ${seeded.body}`);

  const schema = (reflectionResponseFormat() as { json_schema: { schema: Record<string, unknown> } })
    .json_schema.schema;
  const queuedParts: Record<string, number> = {};
  const stored: Record<string, number> = {};
  const replies: Record<string, number> = {};
  const latencies: number[] = [];
  const targetsOffered: number[] = [];
  for (let index = 0; index < turns; index += 1) {
    const turn = script[index % script.length];
    if (turn === undefined) break;
    const retrieved = await post("/retrieve", {
      principal,
      requestText: turn.user,
      tokenBudget: 1200,
      mode: "standard",
      modelLocation: "local",
    });
    const bundle = RetrieveResponseSchema.parse(retrieved.status === 200 ? JSON.parse(retrieved.body) : {});
    const targets = shownTargets(bundle.facts);
    targetsOffered.push(targets.length);
    // A conversation over a few days: a new session every six turns (cross-session reinforcement counts more).
    const sessionKey = `agent:main:openai-user:alice:thread:day${Math.floor(index / 6)}`;
    const job = buildReflectionJob({
      jobId: `bench-${index}`,
      principal,
      sessionKey,
      runId: `turn-${index}`,
      messages: [
        { role: "user", content: turn.user },
        { role: "assistant", content: turn.assistant },
      ],
      maxChars: 8_000,
      now: new Date(),
      targets,
    });
    if (job === undefined) continue;
    const shown = { blocks: [], texts: bundle.facts.map((fact) => fact.statement) };
    let invalidBefore = 0;
    for (;;) {
      const started = performance.now();
      const response = await ollama.chat({
        model,
        messages: [
          { role: "system", content: reflectionInstructions },
          { role: "user", content: reflectionMessage(job) },
        ],
        format: schema,
        options: { num_predict: outputTokens },
      });
      latencies.push(performance.now() - started);
      const next = reflectionReplyAction({
        reply: response.message.content,
        job,
        invalidBefore,
        isInjected: (statement) => isInjectedStatement(statement, shown),
      });
      add(replies, next.action);
      if (next.action === "retry") {
        invalidBefore += 1;
        continue;
      }
      if (next.action === "queue") {
        for (const [part, count] of Object.entries(next.parts)) add(queuedParts, part, count);
        const answer = await post("/reflect", { ...next.request.delta, principal });
        if (answer.status !== 200) {
          add(stored, `refused_${answer.status}`);
        } else {
          const outcome = JSON.parse(answer.body) as ReflectResponse;
          add(stored, "created", outcome.created.length);
          add(stored, "reinforced", outcome.reinforced.length);
          add(stored, "invalidated", outcome.invalidated.length);
          add(stored, "adjusted", outcome.adjusted.length);
          add(stored, "links_added", outcome.linksAdded);
          add(stored, "links_dropped", outcome.linksDropped);
          add(stored, "unmatched_corrections", outcome.unmatchedCorrections.length);
          add(stored, "candidate_dimensions", outcome.candidateDimensions);
        }
      }
      break;
    }
    console.log(
      `turn ${index + 1}/${turns}`,
      JSON.stringify({ targets: targets.length, parts: queuedParts }),
    );
  }
  await app.close();
  const result = {
    benchmark: "reflection",
    finishedAt: new Date().toISOString(),
    model,
    outputTokens,
    turns,
    seedObjects: seed.length,
    meanTargetsOffered: Math.round((targetsOffered.reduce((a, b) => a + b, 0) / turns) * 100) / 100,
    repliesPer100Turns: per100(replies),
    queuedPartsPer100Turns: per100(queuedParts),
    storedPer100Turns: per100(stored),
    reflectionMs: {
      p50: Math.round(percentile(latencies, 50)),
      p95: Math.round(percentile(latencies, 95)),
      runs: latencies.length,
    },
  };
  writeFileSync(join(benchDir, "results", "reflection.json"), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await ollamaService.stop();
  await opensearch.stop();
}
