/**
 * Memory pollution: long hand-written conversations (bench/fixtures/pollution) with small talk, repeated questions,
 * tool noise, the assistant echoing the memory it was shown and its own mistakes, each turn pushed through the real
 * hooks plugin (bench/plugin-host.ts: its hooks, gates, explicit saves, capture, reflection runs on the real Ollama
 * and its delivery queues) into a real Cortex on real OpenSearch, then one dream cycle. What memory then holds is
 * scored against the turns' labels (bench/pollution-score.ts): junkRate, items from injected content, stale facts,
 * duplicates dream did not merge, and how many of the labelled facts were kept. Writes bench/results/pollution.json.
 *
 * Knobs: BENCH_POLLUTION_MODEL (reflection model; default the test bed's SmolLM2-135M; another model's result goes to
 * pollution-<model>.json, e.g. the test bed's smollm2-135m-fewshot, which copies every reflected turn's words into a
 * fact: the most eager extractor there is, so what it stores measures the plugin's gates alone), BENCH_POLLUTION_CONVERSATIONS
 * (how many of the corpus's conversations, default all), BENCH_POLLUTION_OUTPUT_TOKENS (default 1024).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startOllama, startOpenSearch } from "@remram/test-harness";
import { Ollama } from "ollama";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { maturationPlugin } from "../cortex/src/maturation.js";
import { type PluginHost, startPluginHost } from "./plugin-host.js";
import { type Conversation, loadCorpus } from "./pollution-corpus.js";
import { type ConversationScore, type StoredObject, scoreConversation, totals } from "./pollution-score.js";

const tokens = { gateway: "bench-gateway-0123456789abcdef", operator: "bench-operator-0123456789abcdef" };
const corpus = loadCorpus().slice(
  0,
  Number(process.env.BENCH_POLLUTION_CONVERSATIONS ?? Number.MAX_SAFE_INTEGER),
);
const outputTokens = Number(process.env.BENCH_POLLUTION_OUTPUT_TOKENS ?? 1024);
/** A tool result the tool itself would flag as failed (the corpus gives the output only). */
const failedOutput = /^\s*(?:error\b|ENOENT|EACCES|permission denied|command not found|.*\bnot found\b)/i;

/** Ids in Cortex for this conversation's people and household: conversations share one Cortex. */
const member = (conversation: Conversation, userId: string) => `c${conversation.id.slice(0, 2)}-${userId}`;
const householdOf = (conversation: Conversation) =>
  `c${conversation.id.slice(0, 2)}-${conversation.household}`;

const opensearch = await startOpenSearch();
const ollamaService = await startOllama();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-pollution-"));
const indexPrefix = `bench-pollution-${Date.now()}`;
try {
  const model = process.env.BENCH_POLLUTION_MODEL ?? ollamaService.endpoints.chatModel;
  const ollama = new Ollama({ host: ollamaService.endpoints.url });
  const app = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      ollamaUrl: ollamaService.endpoints.url,
      embedModel: ollamaService.endpoints.embedModel,
      credentials: tokens,
      indexPrefix,
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
  const cortexUrl = await app.listen({ host: "127.0.0.1", port: 0 });
  const tokenFile = join(scratch, "gateway-token");
  writeFileSync(tokenFile, `${tokens.gateway}\n`, { mode: 0o600 });
  const cortex = async (
    method: string,
    url: string,
    payload?: unknown,
    caller: keyof typeof tokens = "gateway",
  ) => {
    const response = await app.inject({
      method: method as "GET" | "POST",
      url,
      headers: { authorization: `Bearer ${tokens[caller]}` },
      ...(payload === undefined ? {} : { payload: payload as object }),
    });
    if (response.statusCode >= 300)
      throw new Error(`${method} ${url} answered ${response.statusCode}: ${response.body}`);
    return JSON.parse(response.body) as unknown;
  };

  const scores: ConversationScore[] = [];
  const started = performance.now();
  let turnsRun = 0;
  for (const conversation of corpus) {
    const household = householdOf(conversation);
    await cortex("POST", "/ingest", {
      events: conversation.seedMemory.map((seed) => ({
        kind: "knowledge",
        provenanceKey: `seed-${conversation.id}-${seed.key}`,
        scope: seed.scope,
        owner:
          seed.scope === "user"
            ? { userId: member(conversation, seed.userId), householdId: household }
            : { householdId: household },
        type: seed.type,
        source: "user",
        confidence: 0.8,
        statement: seed.statement,
      })),
    });
    const host: PluginHost = await startPluginHost({
      ollama,
      reflectionModel: model,
      reflectionOutputTokens: outputTokens,
      config: {
        cortex: { url: cortexUrl, tokenFile, retrieveTimeoutMs: 5_000 },
        principals: {
          householdId: household,
          members: conversation.people.map((person) => member(conversation, person.userId)),
        },
        queue: { drainIntervalMs: 100, backoffInitialMs: 200, backoffMaxMs: 2_000 },
        reflection: { runTimeoutMs: 300_000, model: { provider: "ollama-reflect", model } },
        // Transcripts go to the archive and its chunks, not to the knowledge scored here.
        archive: { enabled: false },
        metrics: { mode: "off" },
      },
    });
    try {
      for (const session of conversation.sessions) {
        for (const [index, turn] of session.turns.entries()) {
          await host.turn({
            sessionKey: `agent:main:telegram:direct:${member(conversation, turn.userId)}:thread:${session.sessionId}`,
            runId: `${session.sessionId}#${index}`,
            user: turn.user,
            assistant: turn.assistant,
            ...(turn.tool === undefined
              ? {}
              : { tool: { ...turn.tool, isError: failedOutput.test(turn.tool.output) } }),
          });
          // The next turn retrieves what this one stored, as in a conversation.
          await host.settle(600_000);
          turnsRun += 1;
        }
      }
    } finally {
      await host.stop();
    }
    console.log(`${conversation.id}: ${conversation.sessions.reduce((n, s) => n + s.turns.length, 0)} turns`);
  }
  const dream = await cortex("POST", "/dream", { full: true }, "operator");

  // What memory holds now: every active knowledge object the conversations created (not the seeds).
  const search = await fetch(`${opensearch.endpoints.url}/${indexPrefix}-knowledge/_search`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ size: 10_000, query: { term: { status: "active" } } }),
  });
  const hits = (
    (await search.json()) as {
      hits: {
        hits: {
          _source: {
            id: string;
            statement: string;
            owner: { userId?: string; householdId?: string };
            provenance: { key: string; sourceTurnIds?: string[] };
          };
        }[];
      };
    }
  ).hits.hits.map((hit) => hit._source);
  for (const conversation of corpus) {
    const household = householdOf(conversation);
    const objects: StoredObject[] = hits
      .filter(
        (object) =>
          object.owner.householdId === household ||
          object.owner.userId?.startsWith(`c${conversation.id.slice(0, 2)}-`),
      )
      .map((object) => {
        const seedKey = object.provenance.key.startsWith(`seed-${conversation.id}-`)
          ? object.provenance.key.slice(`seed-${conversation.id}-`.length)
          : undefined;
        const sourceTurn = object.provenance.sourceTurnIds?.[0];
        return {
          id: object.id,
          statement: object.statement,
          ...(seedKey === undefined ? {} : { seedKey }),
          ...(sourceTurn === undefined ? {} : { sourceTurn }),
        };
      });
    scores.push(scoreConversation(conversation, objects));
  }
  await app.close();
  const result = {
    benchmark: "pollution",
    finishedAt: new Date().toISOString(),
    reflectionModel: model,
    outputTokens,
    conversations: corpus.length,
    turns: turnsRun,
    seconds: Math.round((performance.now() - started) / 1000),
    ...totals(scores),
    dream,
    perConversation: scores,
  };
  // Another model's run is kept beside the default one, not over it.
  const resultName =
    process.env.BENCH_POLLUTION_MODEL === undefined
      ? "pollution"
      : `pollution-${model.replace(/[^a-z0-9]+/gi, "-").toLowerCase()}`;
  writeFileSync(
    join(import.meta.dirname, "results", `${resultName}.json`),
    `${JSON.stringify(result, null, 2)}\n`,
  );
  const { perConversation: _detail, dream: _dream, ...summary } = result;
  console.log(JSON.stringify(summary, null, 2));
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await ollamaService.stop();
  await opensearch.stop();
}
