/**
 * A conversation set through a real Cortex: every turn through /ingest as a `turn` event of the conversation's
 * first speaker (the person whose memory it is), every question through /retrieve with its debug trace. Scores
 * Cortex's hybrid ranking, BM25 alone and vectors alone (the trace's own candidate lists, so all three see the same
 * gate and candidates) and what the bundle carried. Used by bench/devset-recall.ts (a fetched set) and
 * bench/conversation-sets.bench.ts (the generated sets).
 */
import { appendFileSync, writeFileSync } from "node:fs";
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
  type QuestionScore,
  renderTurn,
  scoreRanking,
  setSize,
  summarizeByKind,
  type TurnRendering,
  turnRenderings,
} from "./conversation-recall.js";
import { asRanked, bySignal, type TracedQuestion, tracedQuestion } from "./fusion.js";

export interface ConversationRecallOptions {
  conversations: readonly Conversation[];
  renderings: readonly TurnRendering[];
  modes: readonly ("standard" | "deep")[];
  /** "onnx": Cortex's in-process MiniLM; "ollama": MiniLM through the test bed's Ollama. */
  runtime: "onnx" | "ollama";
  /** Also write each question's candidates here (JSON lines) for bench/devset-fusion.ts. */
  tracesFile?: string;
}

/**
 * The knobs both runs read: BENCH_DEVSET_TURNS (renderings, comma-separated) and BENCH_DEVSET_TRACES (a file to
 * write each question's candidates to, emptied here).
 */
export function recallOptionsFromEnv(
  defaultTurns: string,
): Pick<ConversationRecallOptions, "renderings" | "tracesFile"> {
  const renderings = (process.env.BENCH_DEVSET_TURNS ?? defaultTurns).split(",") as TurnRendering[];
  for (const rendering of renderings) {
    if (!turnRenderings.includes(rendering))
      throw new Error(`BENCH_DEVSET_TURNS: "${rendering}" is not one of ${turnRenderings.join(", ")}`);
  }
  const tracesFile = process.env.BENCH_DEVSET_TRACES;
  if (tracesFile === undefined) return { renderings };
  writeFileSync(tracesFile, "");
  return { renderings, tracesFile };
}

const ks = [5, 10, 20] as const;
const token = "bench-token-0123456789abcdef";
const rankers = ["hybrid", "bm25", "vector", "bundle"] as const;
type Ranker = (typeof rankers)[number];

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
  `recall-${conversation.id.replace(/[^A-Za-z0-9._:@/+-]/g, "_")}`;

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

/** Scores per rendering and mode, and the embedding model they ran with. */
export async function conversationRecall(options: ConversationRecallOptions) {
  const { conversations, modes, runtime, tracesFile } = options;
  const turnCount = setSize(conversations).turns;
  const opensearch = await startOpenSearch();
  // Started inside the try below, so that OpenSearch stops whatever fails.
  let ollama: Started<OllamaEndpoints> | null = null;
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

  async function run(rendering: TurnRendering) {
    const app = await cortex(`recall-${rendering}-${process.pid}`);
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
    if (runtime === "ollama") ollama = await startOllama();
    const results: Record<string, unknown> = {};
    for (const rendering of options.renderings) results[rendering] = await run(rendering);
    return {
      embedding:
        ollama === null
          ? { runtime, model: onnxModel.name }
          : { runtime, model: ollama.endpoints.embedModel },
      renderings: results,
    };
  } finally {
    await ollama?.stop();
    await opensearch.stop();
  }
}
