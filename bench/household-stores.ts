/**
 * What the benchmarks over a household's stores share: the hand-written household conversations (bench/fixtures/
 * pollution) archived as transcripts, and retrieval latency measured while something else runs.
 */
import { join } from "node:path";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../cortex/src/app.js";
import { type CortexConfigInput, cortexConfig } from "../cortex/src/config.js";
import { maturationPlugin } from "../cortex/src/maturation.js";
import { bearer, testCredentials } from "../cortex/src/testing/callers.js";
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
