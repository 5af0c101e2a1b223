/**
 * Benchmarks of reflection, dream and the archive (issue 4): bench/maturation.bench.ts starts
 * OpenSearch through the test harness, calls runMaturationBenchmarks and writes the result as JSON. Objects get
 * random 384-dimension vectors up to `vectorLimit`, so k-NN neighbour lookups are exercised without Ollama.
 * It measures and reports; it asserts nothing.
 *
 * Dream at each size: the first cycles over a corpus dream has never seen (each builds neighbour lists until its
 * time limit, then reconciles), a full cycle once the graph is complete, and an incremental cycle after 1 % of
 * the objects changed.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { type KnowledgeObject, knowledgeObject as knowledgeObjectSchema } from "@remram/contract";
import type { FastifyInstance } from "fastify";
import { buildApp } from "../cortex/src/app.js";
import { cortexConfig } from "../cortex/src/config.js";
import { planDreamCycle } from "../cortex/src/dream/cycle.js";
import { maturationPlugin } from "../cortex/src/maturation.js";
import { request } from "../cortex/src/store/client.js";
import { knowledgeWriteLines } from "../cortex/src/store/documents.js";
import { bearer, testCredentials } from "../cortex/src/testing/callers.js";
import { knowledgeObject as maturingObject } from "../cortex/src/testing/fixtures.js";

export interface BenchmarkOptions {
  opensearchUrl: string;
  /** An empty directory for workspaces and archives. */
  scratchDir: string;
  /** Object counts for the dream cycle, e.g. [10_000, 100_000]. */
  sizes: readonly number[];
  /** Objects beyond this many get no vector (they stay lexical and never get a neighbour list). */
  vectorLimit: number;
  /** Measure dream only, skipping reflection throughput and archive latency. */
  dreamOnly?: boolean;
  log?: (message: string, data: unknown) => void;
}

const headers = bearer("gateway");
const start = Date.UTC(2026, 0, 1);
const iso = (day: number) => new Date(start + day * 86_400_000).toISOString();

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

function millis(since: bigint): number {
  return Math.round(Number(process.hrtime.bigint() - since) / 1e4) / 100;
}

/**
 * A deterministic corpus: 1 in 50 objects shares a claim with a neighbour (contradictions), 1 in 20 recurs across
 * sessions, and 1 in 100 repeats the statement of the object 20 before it (same owner and type: a near-duplicate
 * dream merges).
 */
export function corpusObject(i: number): KnowledgeObject {
  const owner = `user${i % 20}`;
  const day = i % 90;
  const said = i % 100 === 37 ? i - 20 : i;
  return knowledgeObjectSchema.parse({
    id: `bench-${String(i).padStart(7, "0")}`,
    statement: `Household fact number ${said} about topic ${said % 97}`,
    type: ["fact", "preference", "constraint", "decision"][i % 4],
    ...(i % 50 < 2 && {
      claim: { subject: `subject ${Math.floor(i / 50)}`, predicate: "state", object: `value ${i % 50}` },
    }),
    provenance: {
      key: `bench:${i}`,
      source: "reflection",
      sessionId: `s${i % 7}`,
      observedAt: iso(day),
      ingestedAt: iso(day),
    },
    scope: "user",
    owner: { userId: owner },
    privacy: "household",
    consent: {},
    dimensions: { topic: [`t${i % 97}`] },
    confidence: 0.4 + (i % 5) / 10,
    reinforcementCount: 1 + (i % 20 === 0 ? 3 : 0),
    sessionIds: i % 20 === 0 ? ["s1", "s2", "s3"] : [`s${i % 7}`],
    lastReinforcedAt: iso(day),
    validity: { validFrom: iso(day) },
    createdAt: iso(day),
    updatedAt: iso(day),
  });
}

function randomVector(): number[] {
  return Array.from({ length: 384 }, () => Math.random() * 2 - 1);
}

/** Write `size` corpus objects (with random vectors for the first `vectorLimit`) in bulk; the milliseconds taken. */
export async function seed(app: FastifyInstance, size: number, vectorLimit: number): Promise<number> {
  const started = process.hrtime.bigint();
  const { store } = app.cortex;
  for (let from = 0; from < size; from += 1000) {
    const lines: unknown[] = [];
    for (let i = from; i < Math.min(size, from + 1000); i++) {
      const object = corpusObject(i);
      lines.push(
        ...knowledgeWriteLines(
          store.indices,
          "index",
          object,
          i < vectorLimit ? randomVector() : null,
          "random",
        ),
      );
    }
    await request(store, "POST", "/_bulk", lines, { ndjson: true, timeoutMs: 300_000 });
  }
  await request(store, "POST", `/${store.indices.knowledge},${store.indices.vectors}/_refresh`, undefined, {
    timeoutMs: 300_000,
  });
  return millis(started);
}

interface DreamRun {
  ms: number;
  counts: Record<string, number>;
  timingsMs: Record<string, number>;
}

async function dream(app: FastifyInstance, full: boolean): Promise<DreamRun> {
  const started = process.hrtime.bigint();
  const response = await app.inject({
    method: "POST",
    url: "/dream",
    headers: bearer("operator"),
    payload: { full },
  });
  if (response.statusCode !== 200) throw new Error(`dream answered ${response.statusCode}: ${response.body}`);
  const report = response.json<{ counts: Record<string, number>; timingsMs: Record<string, number> }>();
  return { ms: millis(started), counts: report.counts, timingsMs: report.timingsMs };
}

function planOnly(size: number) {
  const objects = Array.from({ length: size }, (_, i) =>
    maturingObject({
      id: `p-${i}`,
      type: "fact",
      claim:
        i % 50 < 2
          ? { subject: `s${Math.floor(i / 50)}`, predicate: "state", object: `v${i % 50}` }
          : undefined,
      lastReinforcedAt: iso(i % 90),
      updatedAt: iso(i % 90),
      sessionIds: i % 20 === 0 ? ["s1", "s2", "s3"] : ["s1"],
      reinforcementCount: i % 20 === 0 ? 4 : 1,
    }),
  );
  const pairs = Array.from({ length: size }, (_, i) => ({
    aId: `p-${i}`,
    bId: `p-${(i * 7919) % size}`,
    similarity: 0.8,
  }));
  const input = {
    cycleId: "bench",
    now: iso(120),
    objects,
    pairs,
    candidateDimensions: [],
    canonicalDimensions: [],
    artifacts: new Map(),
  };
  const full = process.hrtime.bigint();
  planDreamCycle(input);
  const fullMs = millis(full);
  const incremental = process.hrtime.bigint();
  planDreamCycle({ ...input, changedSince: iso(89) });
  return { size, fullMs, incrementalMs: millis(incremental) };
}

export async function runMaturationBenchmarks(options: BenchmarkOptions): Promise<Record<string, unknown>> {
  const { sizes, vectorLimit, scratchDir: scratch } = options;
  const log = options.log ?? (() => undefined);
  const results: Record<string, unknown> = { startedAt: new Date().toISOString(), sizes, vectorLimit };
  results.plannerOnly = sizes.map(planOnly);
  log("planner only", results.plannerOnly);
  let clock = iso(120);
  const buildBenchApp = async (prefix: string) => {
    const config = cortexConfig.parse({
      opensearchUrl: options.opensearchUrl,
      credentials: testCredentials,
      indexPrefix: prefix,
      logLevel: "warn",
      usageFlushIntervalMs: 3_600_000,
    });
    const workspace = join(scratch, `${prefix}-workspace`);
    const app = await buildApp({
      config,
      logger: false,
      clock: () => new Date(clock),
      plugins: [
        maturationPlugin({
          workspaceDir: workspace,
          archiveDir: join(scratch, `${prefix}-archive`),
          gitAuthor: { name: "Bench", email: "bench@remram.invalid" },
        }),
      ],
    });
    await app.cortex.initialized;
    return app;
  };

  const dreamResults = [];
  for (const size of sizes) {
    clock = iso(120);
    const app = await buildBenchApp(`bench-dream-${size}-${randomBytes(3).toString("hex")}`);
    const seedMs = await seed(app, size, vectorLimit);
    // A corpus dream has never seen: cycles, a minute apart, until every embedded object has its neighbour list.
    const firstCycles: DreamRun[] = [];
    do {
      firstCycles.push(await dream(app, false));
      log("first cycles", firstCycles.at(-1));
      clock = new Date(Date.parse(clock) + 60_000).toISOString();
    } while ((firstCycles.at(-1)?.counts.neighbourListsPending ?? 0) > 0 && firstCycles.length < 50);
    const full = await dream(app, true);
    log("full", full);
    // One percent of the objects change, as a day of reflections would.
    clock = iso(121);
    const changed = Math.max(1, Math.floor(size / 100));
    const lines: unknown[] = [];
    for (let i = 0; i < changed; i++) {
      lines.push(
        { update: { _index: app.cortex.store.indices.knowledge, _id: corpusObject((i * 97) % size).id } },
        { doc: { updatedAt: iso(121), lastReinforcedAt: iso(121) } },
      );
    }
    await request(app.cortex.store, "POST", "/_bulk?refresh=wait_for", lines, {
      ndjson: true,
      timeoutMs: 120_000,
    });
    clock = iso(122);
    const incremental = await dream(app, false);
    dreamResults.push({
      size,
      seedMs,
      firstCycles,
      graphBuildMs: firstCycles.reduce((sum, run) => sum + (run.timingsMs.neighbours ?? 0), 0),
      full,
      incremental,
      changedForIncremental: changed,
    });
    log("dream", { size, seedMs, full: full.ms, incremental: incremental.ms });
    const { indices } = app.cortex.store;
    for (const alias of [indices.knowledge, indices.vectors]) {
      // Deleting the vectors index waits for its running HNSW merges to stop.
      await request(app.cortex.store, "DELETE", `/${alias}-v*`, undefined, {
        ignore: [404],
        timeoutMs: 300_000,
      });
    }
    await app.close();
  }
  results.dream = dreamResults;
  if (options.dreamOnly) {
    results.finishedAt = new Date().toISOString();
    return results;
  }

  const app = await buildBenchApp(`bench-reflect-${randomBytes(3).toString("hex")}`);
  const reflections = 300;
  const reflectOnce = async (i: number, user: string) => {
    const started = process.hrtime.bigint();
    const response = await app.inject({
      method: "POST",
      url: "/reflect",
      headers,
      payload: {
        principal: { userId: user, agentId: "main" },
        sessionId: `session-${user}-${i}`,
        items: [
          {
            type: "preference",
            statement: `User ${user} prefers option ${i % 3}`,
            claim: { subject: user, predicate: "prefers", object: `option ${i % 3}` },
            scope: { kind: "user", ownerIds: [user] },
            sourceTurnIds: [`t${i}`],
          },
          {
            type: "fact",
            statement: `Remark ${i} of ${user}`,
            scope: { kind: "user", ownerIds: [user] },
            sourceTurnIds: [`t${i}`],
          },
        ],
      },
    });
    if (response.statusCode !== 200)
      throw new Error(`reflect answered ${response.statusCode}: ${response.body}`);
    return millis(started);
  };
  // Sequential (one session after another), then 8 at once (the household's sessions ending together).
  const runs = [];
  for (const concurrency of [1, 8]) {
    const latencies: number[] = [];
    const started = process.hrtime.bigint();
    await Promise.all(
      Array.from({ length: concurrency }, async (_, lane) => {
        for (let i = lane; i < reflections; i += concurrency) {
          latencies.push(await reflectOnce(i, `c${concurrency}-u${i % 10}`));
        }
      }),
    );
    const seconds = millis(started) / 1000;
    runs.push({
      concurrency,
      deltas: reflections,
      deltasPerSecond: Math.round((reflections / seconds) * 10) / 10,
      p50Ms: percentile(latencies, 50),
      p95Ms: percentile(latencies, 95),
    });
  }
  results.reflect = { itemsPerDelta: 2, embeddings: false, runs };
  log("reflect", results.reflect);

  const puts: number[] = [];
  const gets: number[] = [];
  const hashes: string[] = [];
  for (let i = 0; i < 300; i++) {
    const started = process.hrtime.bigint();
    const response = await app.inject({
      method: "POST",
      url: "/archive",
      headers,
      payload: {
        document: {
          createdAt: iso(i % 100),
          source: { sessionId: `s${i}`, channel: "telegram" },
          messages: Array.from({ length: 20 }, (_, m) => ({
            role: m % 2 ? "assistant" : "user",
            content: `message ${m} of range ${i} `.repeat(10),
          })),
          consentScope: { ownerIds: ["u1"], privacy: "private", allowRecall: true },
        },
        summary: `Range ${i} summary`,
      },
    });
    if (response.statusCode !== 200)
      throw new Error(`archive answered ${response.statusCode}: ${response.body}`);
    puts.push(millis(started));
    hashes.push(response.json<{ hash: string }>().hash);
  }
  for (const hash of hashes) {
    const started = process.hrtime.bigint();
    const response = await app.inject({
      method: "GET",
      url: `/archive/${hash}?userId=u1&agentId=main`,
      headers,
    });
    if (response.statusCode !== 200) throw new Error(`archive get answered ${response.statusCode}`);
    gets.push(millis(started));
  }
  results.archive = {
    documents: hashes.length,
    bytesPerDocument: "about 4 KB canonical JSON",
    putP50Ms: percentile(puts, 50),
    putP95Ms: percentile(puts, 95),
    getP50Ms: percentile(gets, 50),
    getP95Ms: percentile(gets, 95),
    transport: "in-process inject (no socket)",
  };
  log("archive", results.archive);
  await app.close();
  results.finishedAt = new Date().toISOString();
  return results;
}
