/**
 * What the benchmarks over a household's stores share: the hand-written household conversations (bench/fixtures/
 * pollution) archived as transcripts, and retrieval latency measured while something else runs.
 */
import { writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../cortex/src/app.js";
import { type CortexConfigInput, cortexConfig } from "../cortex/src/config.js";
import { maturationIndices } from "../cortex/src/knowledge/records.js";
import { maturationPlugin } from "../cortex/src/maturation.js";
import { request } from "../cortex/src/store/client.js";
import { bearer, testCredentials } from "../cortex/src/testing/callers.js";
import { bulkCorpus, knowledgeEventOf } from "../cortex/test/fixtures/corpus.js";
import { loadCorpus } from "./pollution-corpus.js";

const sessions = loadCorpus().flatMap((conversation) => conversation.sessions);

export const millis = (since: bigint) => Number(process.hrtime.bigint() - since) / 1e6;
export const median = (values: number[]) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;

/**
 * A Cortex with every route on a fresh prefix, its workspace and archive under `scratch`: no tiering and no usage
 * flushes, so nothing but the benchmark moves its stores.
 */
export async function householdCortex(
  opensearchUrl: string,
  scratch: string,
  prefix: string,
  config: Partial<CortexConfigInput> = {},
): Promise<FastifyInstance> {
  const app = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl,
      credentials: testCredentials,
      indexPrefix: prefix,
      logLevel: "warn",
      archiveTieringIntervalMinutes: 0,
      usageFlushIntervalMs: 3_600_000,
      ...config,
    }),
    logger: false,
    plugins: [
      maturationPlugin({
        workspaceDir: join(scratch, `${prefix}-workspace`),
        archiveDir: join(scratch, `${prefix}-archive`),
        gitAuthor: { name: "Bench", email: "bench@remram.invalid" },
      }),
    ],
  });
  await app.cortex.initialized;
  return app;
}

/**
 * `count` distinct facts of the test corpus (a suffix keeps the statements apart) ingested through /ingest as the
 * gateway sends them, 250 a request.
 */
export async function ingestBulkFacts(app: FastifyInstance, count: number): Promise<void> {
  const now = new Date();
  const facts = bulkCorpus(7, count, Math.min(count, 500)).facts.map((fact, index) => ({
    ...fact,
    statement: `${fact.statement} (entry ${index})`,
  }));
  for (let from = 0; from < facts.length; from += 250) {
    const events = facts.slice(from, from + 250).map((fact) => knowledgeEventOf(fact, now));
    const response = await app.inject({
      method: "POST",
      url: "/ingest",
      headers: bearer("gateway"),
      payload: { events },
    });
    if (response.statusCode !== 200) throw new Error(`ingest ${response.statusCode}: ${response.body}`);
  }
}

/** bench/results/<benchmark>.json with the one entry a run measured. */
export function writeResult(benchmark: string, entry: object): void {
  console.log(benchmark, JSON.stringify(entry));
  writeFileSync(
    join(dirname(fileURLToPath(import.meta.url)), "results", `${benchmark}.json`),
    `${JSON.stringify({ benchmark, finishedAt: new Date().toISOString(), results: [entry] }, null, 2)}\n`,
  );
}

/** Delete every index of the household's Cortex (the maturation ones too), then close it. */
export async function dropHousehold(app: FastifyInstance): Promise<void> {
  const { store } = app.cortex;
  for (const alias of [...Object.values(store.indices), ...Object.values(maturationIndices(store))]) {
    await request(store, "DELETE", `/${alias}*`, undefined, { ignore: [404] });
  }
  await app.close();
}

/** The corpus sessions as archived transcripts, each under its own session id (so each is its own document). */
export async function archiveTranscripts(app: FastifyInstance, count: number): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < count; i++) {
    const session = sessions[i % sessions.length];
    if (session === undefined) throw new Error("the pollution corpus has no sessions");
    const at = `${session.date}T20:00:00.000Z`;
    const response = await app.inject({
      method: "POST",
      url: "/archive/transcripts",
      headers: bearer("gateway"),
      payload: {
        principal: { userId: session.turns[0]?.userId ?? "ana", agentId: "main" },
        sessionId: `${session.sessionId}-${i}`,
        channel: "telegram",
        endReason: "reset",
        endedAt: at,
        messages: session.turns.flatMap((turn) => [
          { role: "user", content: turn.user, at },
          { role: "assistant", content: turn.assistant, at },
        ]),
      },
    });
    if (response.statusCode !== 200)
      throw new Error(`archive answered ${response.statusCode}: ${response.body}`);
  }
  return millis(started);
}

/** Retrieval latency (median of 20) while `during` runs, against the same without it. */
export async function retrieveLatency(app: FastifyInstance): Promise<number> {
  const latencies: number[] = [];
  for (let i = 0; i < 20; i++) {
    const started = process.hrtime.bigint();
    const response = await app.inject({
      method: "POST",
      url: "/retrieve",
      headers: bearer("gateway"),
      payload: {
        principal: { userId: `user${i % 20}`, agentId: "main" },
        requestText: `What do we know about topic ${i * 7} in the household?`,
        tokenBudget: 1024,
      },
    });
    if (response.statusCode !== 200)
      throw new Error(`retrieve answered ${response.statusCode}: ${response.body}`);
    latencies.push(millis(started));
  }
  return median(latencies);
}
