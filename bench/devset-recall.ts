/**
 * Recall on a fetched long-conversation dev set (LoCoMo: ten conversations of 19–32 sessions, 5,882 turns,
 * 1,531 questions with turn-level evidence; CC BY-NC 4.0, so it stays in a scratch folder outside the repository):
 * every turn through the real /ingest as a `turn` event of the conversation's first speaker, every question through
 * the real /retrieve with its debug trace. One run scores Cortex's hybrid ranking, BM25 alone and vectors alone
 * (the trace's own candidate lists, so all three see the same gate and candidates) and what the bundle carried.
 *
 *   npx tsx bench/devset-recall.ts /path/to/locomo   (a folder of conversation files or locomo10.json)
 *
 * BENCH_DEVSET_TURNS: plain | speaker | dated (default speaker; conversation-recall.ts renderTurn), several
 * separated by commas to compare them in one run; BENCH_DEVSET_MODES (default "standard"); BENCH_DEVSET_CONVERSATIONS
 * to take the first N; BENCH_EMBED_RUNTIME=ollama embeds through Ollama instead of Cortex's in-process MiniLM;
 * BENCH_DEVSET_TRACES=<file> also writes each question's candidates (turn ids, signal ranks and scores, the feature
 * multiplier; JSON lines) for bench/devset-fusion.ts. Writes bench/results/devset-recall.json (scores only; no text
 * of the set).
 */
import { appendFileSync, mkdirSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import type { IngestResponse, RetrieveResponse } from "@remram/contract";
import {
  type OllamaEndpoints,
  onnxEmbeddingModel,
  type Started,
  startOllama,
  startOpenSearch,
} from "@remram/test-harness";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { percentile } from "../cortex/test/fixtures/load.js";
import {
  type Conversation,
  loadLocomo,
  type QuestionScore,
  renderTurn,
  scoreRanking,
  summarizeByKind,
  type TurnRendering,
  turnRenderings,
} from "./conversation-recall.js";
import { asRanked, bySignal, type TracedQuestion, tracedQuestion } from "./fusion.js";

const setPath = process.argv[2] ?? process.env.BENCH_DEVSET;
if (setPath === undefined) {
  console.error("usage: npx tsx bench/devset-recall.ts <LoCoMo folder or locomo10.json>");
  process.exit(2);
}
const renderings = (process.env.BENCH_DEVSET_TURNS ?? "speaker").split(",") as TurnRendering[];
for (const rendering of renderings) {
  if (!turnRenderings.includes(rendering))
    throw new Error(`BENCH_DEVSET_TURNS: "${rendering}" is not one of ${turnRenderings.join(", ")}`);
}
const modes = (process.env.BENCH_DEVSET_MODES ?? "standard").split(",") as ("standard" | "deep")[];
const runtime = process.env.BENCH_EMBED_RUNTIME === "ollama" ? "ollama" : "onnx";
const ks = [5, 10, 20] as const;
const token = "bench-token-0123456789abcdef";
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
const rankers = ["hybrid", "bm25", "vector", "bundle"] as const;
const tracesFile = process.env.BENCH_DEVSET_TRACES;
if (tracesFile !== undefined) writeFileSync(tracesFile, "");
type Ranker = (typeof rankers)[number];

const conversations = loadLocomo(setPath).slice(
  0,
  Number(process.env.BENCH_DEVSET_CONVERSATIONS ?? Infinity),
);
const turnCount = conversations.reduce(
  (sum, conversation) => sum + conversation.sessions.reduce((n, session) => n + session.turns.length, 0),
  0,
);
const opensearch = await startOpenSearch();
const ollama: Started<OllamaEndpoints> | null = runtime === "ollama" ? await startOllama() : null;
const onnxModel = onnxEmbeddingModel();

async function cortex(indexPrefix: string): Promise<FastifyInstance> {
  const app = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      credentials: { gateway: token },
      indexPrefix,
      logLevel: "warn",
      retrieveTimeoutMs: 10_000,
      embedTimeoutMs: 30_000,
      ...(ollama === null
        ? { embedRuntime: "onnx", embedModelDir: onnxModel.dir, embedModel: onnxModel.name }
        : { ollamaUrl: ollama.endpoints.url, embedModel: ollama.endpoints.embedModel }),
    }),
  });
  await app.cortex.initialized;
  return app;
}

async function post<T>(app: FastifyInstance, url: string, payload: object): Promise<T> {
  const response = await app.inject({
    method: "POST",
    url,
    headers: { authorization: `Bearer ${token}` },
    payload,
  });
  if (response.statusCode !== 200)
    throw new Error(`${url} answered ${response.statusCode}: ${response.body}`);
  return response.json<T>();
}

const userOf = (conversation: Conversation) =>
  `devset-${conversation.id.replace(/[^A-Za-z0-9._:@/+-]/g, "_")}`;

/** Every turn of the conversation as a `turn` event; the stored chunks' ids, mapped back to the turn ids. */
async function ingestConversation(
  app: FastifyInstance,
  conversation: Conversation,
  rendering: TurnRendering,
): Promise<Map<string, string>> {
  const events = conversation.sessions.flatMap((session, index) =>
    session.turns.map((turn) => ({
      kind: "turn" as const,
      scope: "user" as const,
      owner: { userId: userOf(conversation) },
      privacy: "private" as const,
      sessionId: `${userOf(conversation)}-s${index + 1}`,
      observedAt: session.at,
      role: turn.speaker === conversation.speakers[0] ? ("user" as const) : ("assistant" as const),
      turnId: turn.id,
      provenanceKey: `${conversation.id}:${turn.id}`,
      text: renderTurn(turn, session.at, rendering),
    })),
  );
  const turnOfChunk = new Map<string, string>();
  for (let start = 0; start < events.length; start += 128) {
    const batch = events.slice(start, start + 128);
    const answer = await post<IngestResponse>(app, "/ingest", { events: batch });
    if (!answer.embedded) throw new Error("ingest stored turns without vectors: the embedder is not working");
    for (const item of answer.items) {
      const turnId = batch[item.index]?.turnId;
      if (turnId !== undefined) for (const id of item.ids) turnOfChunk.set(id, turnId);
    }
  }
  return turnOfChunk;
}

/** The turn ids each ranker puts first: the trace's candidates (as traced for devset-fusion) and the bundle's. */
function rankings(
  answer: RetrieveResponse,
  traced: TracedQuestion,
  turnOfChunk: ReadonlyMap<string, string>,
): Record<Ranker, string[]> {
  return {
    hybrid: asRanked(traced.candidates),
    bm25: bySignal(traced.candidates, "bm25Rank"),
    vector: bySignal(traced.candidates, "knnRank"),
    bundle: answer.chunks.flatMap((chunk) => turnOfChunk.get(chunk.id) ?? []),
  };
}

async function run(rendering: TurnRendering) {
  const app = await cortex(`devset-${rendering}-${process.pid}`);
  const ingestStarted = performance.now();
  const turnOfChunk = new Map<string, string>();
  for (const conversation of conversations) {
    for (const [chunk, turn] of await ingestConversation(app, conversation, rendering))
      turnOfChunk.set(chunk, turn);
  }
  const ingestSeconds = (performance.now() - ingestStarted) / 1000;
  const byMode: Record<string, unknown> = {};
  for (const mode of modes) {
    const scores: Record<Ranker, QuestionScore[]> = { hybrid: [], bm25: [], vector: [], bundle: [] };
    const latencies: number[] = [];
    for (const conversation of conversations) {
      for (const question of conversation.questions) {
        const started = performance.now();
        const answer = await post<RetrieveResponse>(app, "/retrieve", {
          principal: { userId: userOf(conversation), agentId: "main" },
          requestText: question.question,
          tokenBudget: 2000,
          mode,
          modelLocation: "local",
          debug: true,
        });
        latencies.push(performance.now() - started);
        if (answer.degraded) throw new Error(`retrieval degraded: ${answer.degradedReasons.join("; ")}`);
        const traced = tracedQuestion(question, answer.trace?.items ?? [], "chunk", (id) =>
          turnOfChunk.get(id),
        );
        if (tracesFile !== undefined)
          appendFileSync(tracesFile, `${JSON.stringify({ rendering, mode, ...traced })}\n`);
        const ranked = rankings(answer, traced, turnOfChunk);
        for (const ranker of rankers) scores[ranker].push(scoreRanking(ranked[ranker], question, ks));
      }
    }
    byMode[mode] = {
      ...Object.fromEntries(rankers.map((ranker) => [ranker, summarizeByKind(scores[ranker], ks)])),
      retrieveMs: {
        p50: Math.round(
          percentile(
            latencies.sort((a, b) => a - b),
            50,
          ),
        ),
        p95: Math.round(percentile(latencies, 95)),
      },
    };
    console.log(`${rendering} ${mode}: ${JSON.stringify(byMode[mode])}`);
  }
  await app.close();
  return {
    turns: turnOfChunk.size,
    ingestSeconds: Math.round(ingestSeconds),
    ingestTurnsPerSecond: Math.round(turnCount / ingestSeconds),
    modes: byMode,
  };
}

try {
  const results: Record<string, unknown> = {};
  for (const rendering of renderings) results[rendering] = await run(rendering);
  const result = {
    benchmark: "devset-recall",
    finishedAt: new Date().toISOString(),
    set: {
      name: basename(setPath),
      conversations: conversations.length,
      turns: turnCount,
      questions: conversations.reduce((sum, c) => sum + c.questions.length, 0),
    },
    goal: { recallAt10: 0.8, mrr: "above BM25's" },
    embedding:
      ollama === null ? { runtime, model: onnxModel.name } : { runtime, model: ollama.endpoints.embedModel },
    renderings: results,
  };
  mkdirSync(resultsDir, { recursive: true });
  writeFileSync(join(resultsDir, "devset-recall.json"), `${JSON.stringify(result, null, 2)}\n`);
  console.log(JSON.stringify(result, null, 2));
} finally {
  await ollama?.stop();
  await opensearch.stop();
}
