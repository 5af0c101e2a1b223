/**
 * Session transcripts into the archive and retrieval (POST /archive/transcripts) on a real OpenSearch: transcripts
 * and chunks per second at 1 and 4 in flight, with embeddings (Ollama) and lexical-only; the in-process cost of
 * redaction, canonical hashing and chunking alone; and one tiering pass that bundles every document cold.
 * Writes bench/results/transcripts.json after every run (an interrupted benchmark keeps what it measured). Knobs:
 * BENCH_TRANSCRIPTS (per lexical run, default 30), BENCH_TRANSCRIPTS_EMBEDDED (per run with embeddings, default 8:
 * CPU MiniLM embeds every chunk), BENCH_TRANSCRIPT_MESSAGES (messages per transcript, default 40). It measures and
 * reports; it asserts nothing.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { type TranscriptArchiveRequestInput, transcriptArchiveRequest } from "@remram/contract";
import { startOllama, startOpenSearch } from "@remram/test-harness";
import { buildApp } from "../cortex/src/app.js";
import { canonicalise, redactDocument } from "../cortex/src/archive/document.js";
import { transcriptChunks, transcriptDocument, transcriptSummary } from "../cortex/src/archive/transcript.js";
import { cortexConfig } from "../cortex/src/config.js";
import { maturationPlugin } from "../cortex/src/maturation.js";
import { testCredentials } from "../cortex/src/testing/callers.js";
import { runLoad } from "../cortex/test/fixtures/load.js";

const transcripts = Number(process.env.BENCH_TRANSCRIPTS ?? 30);
const embeddedTranscripts = Number(process.env.BENCH_TRANSCRIPTS_EMBEDDED ?? 8);
const messagesPer = Number(process.env.BENCH_TRANSCRIPT_MESSAGES ?? 40);
const resultsDir = join(dirname(fileURLToPath(import.meta.url)), "results");
const words =
  "allotment rhubarb quince compost seedlings greenhouse frost pruning harvest trellis beans".split(" ");

/** A deterministic conversation: alternating turns of 30–90 words, one of them carrying a credential. */
function transcript(index: number, now: Date): TranscriptArchiveRequestInput {
  const messages = Array.from({ length: messagesPer }, (_, m) => {
    const length = 30 + ((index * 7 + m * 13) % 61);
    const text = Array.from({ length }, (_, w) => words[(index + m + w * 3) % words.length]).join(" ");
    return {
      role: m % 2 === 0 ? ("user" as const) : ("assistant" as const),
      content: m === 3 ? `${text} key sk-proj-${randomBytes(20).toString("hex")}` : `${text} (${index}.${m})`,
      at: new Date(now.getTime() - (messagesPer - m) * 60_000).toISOString(),
    };
  });
  return {
    principal: { userId: `user${index % 8}`, agentId: "main" },
    sessionId: `bench-session-${index}`,
    channel: "telegram",
    endReason: "reset",
    endedAt: now.toISOString(),
    messages,
  };
}

const opensearch = await startOpenSearch();
const ollama = await startOllama();
const scratch = mkdtempSync(join(tmpdir(), "remram-bench-transcripts-"));
try {
  const now = new Date();

  // The pure part, per transcript: redaction, canonical bytes and hash, summary, L0/L1/L2 chunks.
  const planned = Array.from({ length: transcripts }, (_, i) =>
    transcriptArchiveRequest.parse(transcript(i, now)),
  );
  const planStart = process.hrtime.bigint();
  let plannedChunks = 0;
  let canonicalBytes = 0;
  for (const request of planned) {
    const document = redactDocument(transcriptDocument(request));
    const { bytes, hash } = canonicalise(document);
    canonicalBytes += bytes.length;
    plannedChunks += transcriptChunks(
      document,
      hash,
      transcriptSummary(document),
      request.principal,
      now.toISOString(),
    ).length;
  }
  const planSeconds = Number(process.hrtime.bigint() - planStart) / 1e9;

  const run = async (withEmbeddings: boolean, inFlight: number, count: number) => {
    const prefix = `bench-tr-${withEmbeddings ? "vec" : "lex"}-${inFlight}-${randomBytes(3).toString("hex")}`;
    const config = cortexConfig.parse({
      opensearchUrl: opensearch.endpoints.url,
      credentials: testCredentials,
      indexPrefix: prefix,
      logLevel: "warn",
      archiveTieringIntervalMinutes: 0,
      ...(withEmbeddings && { ollamaUrl: ollama.endpoints.url, embedModel: ollama.endpoints.embedModel }),
    });
    let clock = now;
    const app = await buildApp({
      config,
      clock: () => clock,
      plugins: [
        maturationPlugin({
          workspaceDir: join(scratch, `${prefix}-workspace`),
          archiveDir: join(scratch, `${prefix}-archive`),
          gitAuthor: { name: "Bench", email: "bench@remram.invalid" },
        }),
      ],
    });
    await app.cortex.initialized;
    const address = await app.listen({ host: "127.0.0.1", port: 0 });
    let chunks = 0;
    let embedded = 0;
    const started = process.hrtime.bigint();
    const load = await runLoad(count, inFlight, async (i) => {
      const response = await fetch(`${address}/archive/transcripts`, {
        method: "POST",
        headers: { authorization: `Bearer ${testCredentials.gateway}`, "content-type": "application/json" },
        body: JSON.stringify(transcript(i, now)),
      });
      if (!response.ok) throw new Error(`archive/transcripts ${response.status}: ${await response.text()}`);
      const body = (await response.json()) as { chunks: { created: number }; embedded: boolean };
      chunks += body.chunks.created;
      if (body.embedded) embedded += 1;
    });
    const seconds = Number(process.hrtime.bigint() - started) / 1e9;
    // Then age them all past the cold threshold (default 180 days idle) and bundle them in one pass.
    clock = new Date(now.getTime() + 400 * 86_400_000);
    const tiering = await fetch(`${address}/archive/tiering`, {
      method: "POST",
      headers: { authorization: `Bearer ${testCredentials.operator}` },
    }).then((response) => response.json());
    await app.close();
    return {
      withEmbeddings,
      inFlight,
      transcripts: count,
      messagesPerTranscript: messagesPer,
      transcriptsPerSecond: Math.round((count / seconds) * 100) / 100,
      chunksPerSecond: Math.round((chunks / seconds) * 10) / 10,
      chunksPerTranscript: Math.round((chunks / count) * 10) / 10,
      embeddedTranscripts: embedded,
      latency: load,
      tieringPassAfter400Days: tiering,
    };
  };

  const result = {
    benchmark: "transcripts",
    finishedAt: new Date().toISOString(),
    embedModel: ollama.endpoints.embedModel,
    planning: {
      transcripts,
      canonicalKiB: Math.round(canonicalBytes / 1024),
      chunks: plannedChunks,
      transcriptsPerSecond: Math.round((transcripts / planSeconds) * 10) / 10,
      chunksPerSecond: Math.round(plannedChunks / planSeconds),
    },
    runs: [] as Awaited<ReturnType<typeof run>>[],
  };
  mkdirSync(resultsDir, { recursive: true });
  const plan: [boolean, number, number][] = [
    [false, 1, transcripts],
    [false, 4, transcripts],
    [true, 2, embeddedTranscripts],
  ];
  for (const [withEmbeddings, inFlight, count] of plan) {
    result.runs.push(await run(withEmbeddings, inFlight, count));
    result.finishedAt = new Date().toISOString();
    writeFileSync(join(resultsDir, "transcripts.json"), `${JSON.stringify(result, null, 2)}\n`);
    console.log(JSON.stringify(result.runs.at(-1)));
  }
} finally {
  rmSync(scratch, { recursive: true, force: true });
  await ollama.stop();
  await opensearch.stop();
}
