import { randomUUID } from "node:crypto";
import type { CandidateDimension, KnowledgeObject } from "@remram/contract";
import { dreamCountNames } from "@remram/contract";
import { Gauge, Histogram, type Registry } from "prom-client";
import type { CortexContext } from "../context.js";
import { serviceUnavailable } from "../http-errors.js";
import { ErasureInProgressError, type ErasureLease, erasureGate } from "../knowledge/erasure-gate.js";
import { toMaturing } from "../knowledge/mapping.js";
import { listRecords, type MaturationIndices, writeRecords } from "../knowledge/records.js";
import { type DocumentVersion, loadObjects, scanObjects, writeObjects } from "../knowledge/repository.js";
import { request as storeRequest } from "../store/client.js";
import { listCandidateDimensions } from "../store/counters.js";
import { scanDocuments } from "../store/reads.js";
import { bulk } from "../store/writes.js";
import { readArtifacts } from "./artifacts.js";
import {
  type DreamInput,
  type DreamReport,
  defaultDreamOptions,
  dreamReport,
  planDreamCycle,
} from "./cycle.js";
import {
  objectChanges,
  principleVectors,
  proposalRecords,
  reviewAndPromotionRecords,
} from "./cycle-writes.js";
import { lookUpNeighbours } from "./neighbour-lookup.js";
import { type NeighbourList, neighbourLookupOrder, pairsFromNeighbourLists } from "./neighbours.js";

/**
 * The dream cycle's shell: single-flight, incremental (objects changed since the last cycle started, plus a
 * decay sweep over everything), with the neighbour graph kept between cycles and its k-NN lookups bounded in
 * time, progress in /metrics and in the status endpoint.
 */

export interface DreamRequest {
  dryRun: boolean;
  maxProposals: number;
  /** Compare every pair, not only pairs touching what changed since the last cycle. */
  full: boolean;
  /** Overrides the configured time for neighbour lookups (e.g. to finish the graph after a large import). */
  neighbourLookupSeconds?: number | undefined;
}

export interface DreamProgress {
  cycleId: string;
  startedAt: string;
  phase: "loading" | "neighbours" | "planning" | "writing" | "done";
  objectsLoaded: number;
  neighbourListsBuilt: number;
}

export class DreamBusyError extends Error {
  override readonly name = "DreamBusyError";
  constructor(readonly cycleId: string) {
    super(`dream cycle ${cycleId} is running`);
  }
}

export interface DreamSettings {
  workspaceDir: string;
  artifactsDir: string;
  /** Stop looking up neighbours after this long; the report counts what is left for the next cycle. */
  timeLimitMs: number;
}

interface CycleState {
  indices: MaturationIndices;
  input: DreamInput;
  plan: ReturnType<typeof planDreamCycle>;
  stored: Map<string, { object: KnowledgeObject; version: DocumentVersion }>;
  lists: Map<string, NeighbourList>;
  timingsMs: Record<string, number>;
  lap: (phase: string) => void;
}

function asHttp<T>(work: () => T): T {
  try {
    return work();
  } catch (error) {
    throw error instanceof ErasureInProgressError ? serviceUnavailable(error.message) : error;
  }
}

export class DreamRunner {
  private current: DreamProgress | null = null;
  private readonly running: Gauge;
  private readonly progress: Gauge<"measure">;
  private readonly duration: Histogram<"outcome">;
  private readonly lastCounts: Gauge<"count">;

  constructor(
    private readonly context: CortexContext,
    private readonly indices: () => Promise<MaturationIndices>,
    private readonly settings: DreamSettings,
    registry: Registry,
  ) {
    this.running = new Gauge({
      name: "cortex_dream_running",
      help: "1 while a dream cycle runs",
      registers: [registry],
    });
    this.progress = new Gauge({
      name: "cortex_dream_progress",
      help: "Progress of the running dream cycle (objects loaded, neighbour lists built)",
      labelNames: ["measure"],
      registers: [registry],
    });
    this.duration = new Histogram({
      name: "cortex_dream_cycle_duration_seconds",
      help: "Dream cycle duration by outcome",
      labelNames: ["outcome"],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    });
    this.lastCounts = new Gauge({
      name: "cortex_dream_last_counts",
      help: "Counts of the last finished dream cycle",
      labelNames: ["count"],
      registers: [registry],
    });
  }

  status(): DreamProgress | null {
    return this.current === null ? null : { ...this.current };
  }

  /**
   * Start a cycle; throws DreamBusyError while another runs, and a 503 while an erasure runs. Resolves with the
   * stored report; a cycle an erasure overlaps writes nothing after it began (its reads may hold erased data) and
   * fails with a 503, to be run again.
   */
  run(request: DreamRequest): { cycleId: string; report: Promise<DreamReport> } {
    if (this.current !== null) throw new DreamBusyError(this.current.cycleId);
    const lease = asHttp(() => erasureGate(this.context.store).lease("a dream cycle"));
    const cycleId = `dream-${this.context.clock().toISOString().replace(/[-:.]/g, "").slice(0, 15)}-${randomUUID().slice(0, 8)}`;
    this.current = {
      cycleId,
      startedAt: this.context.clock().toISOString(),
      phase: "loading",
      objectsLoaded: 0,
      neighbourListsBuilt: 0,
    };
    this.running.set(1);
    const started = process.hrtime.bigint();
    const report = this.cycle(this.current, request, lease).then(
      (result) => {
        this.finish(started, "succeeded");
        for (const name of dreamCountNames) this.lastCounts.set({ count: name }, result.counts[name]);
        return result;
      },
      (error: unknown) => {
        this.finish(started, "failed");
        throw error instanceof ErasureInProgressError ? serviceUnavailable(error.message) : error;
      },
    );
    return { cycleId, report };
  }

  private finish(started: bigint, outcome: string): void {
    this.duration.observe({ outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    this.current = null;
    this.running.set(0);
    this.progress.reset();
  }

  private async cycle(
    progress: DreamProgress,
    request: DreamRequest,
    lease: ErasureLease,
  ): Promise<DreamReport> {
    const { store } = this.context;
    const indices = await this.indices();
    const timingsMs: Record<string, number> = {};
    let lapStarted = performance.now();
    const lap = (phase: string) => {
      timingsMs[phase] = Math.round(performance.now() - lapStarted);
      lapStarted = performance.now();
    };
    const deadline =
      Date.now() +
      (request.neighbourLookupSeconds === undefined
        ? this.settings.timeLimitMs
        : request.neighbourLookupSeconds * 1000);
    const previous = (
      await listRecords<DreamReport>(store, indices, "dreamReport", { state: "succeeded" }, 1)
    )[0];
    const changedSince = previous?.body.startedAt;

    // Objects and the neighbour graph load side by side (100k of each: 1.7 s on the 2-core test machine).
    const stored = new Map<string, { object: KnowledgeObject; version: DocumentVersion }>();
    const lists = new Map<string, NeighbourList>();
    await Promise.all([
      (async () => {
        // Only active objects: every rule acts on live objects alone, and a demoted one comes back only when
        // reflection asserts it again. On a mature corpus most objects are demoted one-off remarks.
        for await (const page of scanObjects(store, { term: { status: "active" } })) {
          for (const entry of page) stored.set(entry.object.id, entry);
          progress.objectsLoaded = stored.size;
          this.progress.set({ measure: "objectsLoaded" }, stored.size);
        }
      })(),
      (async () => {
        for await (const page of scanDocuments<NeighbourList>(store, indices.neighbours, { match_all: {} })) {
          for (const hit of page) lists.set(hit._id, hit._source);
        }
      })(),
    ]);
    lap("load");

    progress.phase = "neighbours";
    const now = progress.startedAt;
    const lookups = neighbourLookupOrder(
      [...stored.values()].map(({ object }) => ({
        id: object.id,
        changed: changedSince === undefined || object.updatedAt > changedSince,
      })),
      lists,
      this.context.embedder !== null,
    );
    // Lookups write lists and vectors of what was loaded: an erasure waits for them, or refuses them after it.
    const graph = await lease.write(() =>
      lookUpNeighbours(this.context, indices, {
        ids: lookups,
        stored,
        deadline,
        now,
        onBuilt: (count) => {
          progress.neighbourListsBuilt = count;
          this.progress.set({ measure: "neighbourListsBuilt" }, count);
        },
      }),
    );
    for (const list of graph.built) lists.set(list.id, list);
    const pairs = pairsFromNeighbourLists(
      lists.values(),
      new Set(stored.keys()),
      new Set(graph.built.map((list) => list.id)),
    );
    lap("neighbours");

    progress.phase = "planning";
    const candidates = await listCandidateDimensions<CandidateDimension>(store, 1000);
    // In id order: the scan's order is the index's, and the plan must not depend on it.
    const objects = [...stored.values()]
      .map(({ object }) => toMaturing(object))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const policy = this.context.policy.get();
    const confidenceByDimension = new Map<string, { sum: number; count: number }>();
    for (const object of objects) {
      for (const [name, values] of Object.entries(object.dimensions)) {
        if (values.length === 0) continue;
        const entry = confidenceByDimension.get(name) ?? { sum: 0, count: 0 };
        confidenceByDimension.set(name, { sum: entry.sum + object.confidence, count: entry.count + 1 });
      }
    }
    const input: DreamInput = {
      cycleId: progress.cycleId,
      now,
      changedSince,
      compareAll: request.full,
      objects,
      pairs,
      neighbourGraph: {
        built: graph.built.length,
        pending: lookups.length - graph.built.length,
        vectorsBackfilled: graph.vectorsBackfilled,
      },
      candidateDimensions: candidates.map((c) => {
        const carrying = confidenceByDimension.get(c.name) ?? { sum: 0, count: 0 };
        const meanConfidence = carrying.sum / Math.max(1, carrying.count);
        return { name: c.name, occurrences: c.occurrences, meanConfidence, values: c.sampleValues };
      }),
      canonicalDimensions: policy.dimensions.map((d) => d.name),
      artifacts: await readArtifacts(this.settings.workspaceDir, this.settings.artifactsDir),
    };
    const plan = planDreamCycle(input, {
      ...defaultDreamOptions,
      dimensionPolicy: policy.candidatePromotion,
      decay: { ...defaultDreamOptions.decay, demotionThreshold: policy.eligibility.minConfidence },
      artifactsDir: this.settings.artifactsDir,
      maxProposals: request.dryRun ? 0 : request.maxProposals,
    });
    lap("plan");
    if (request.dryRun) {
      return {
        ...dreamReport(input, plan, this.context.clock().toISOString(), { writeConflicts: 0 }),
        timingsMs,
      };
    }

    progress.phase = "writing";
    return lease.write(() => this.write(progress, { indices, input, plan, stored, lists, timingsMs, lap }));
  }

  /** The writing phase, one section of the erasure gate: an erasure waits for it, or it is refused. */
  private async write(
    progress: DreamProgress,
    { indices, input, plan, stored, lists, timingsMs, lap }: CycleState,
  ): Promise<DreamReport> {
    const { store } = this.context;
    const now = progress.startedAt;
    // A principle the plan founds under the id of a demoted one is loaded to be revived.
    const refounded = await loadObjects(
      store,
      plan.writes.filter((o) => !stored.has(o.id)).map((o) => o.id),
    );
    const { created, updated } = objectChanges(plan.writes, stored, refounded);
    const vectors = await principleVectors(this.context.embedder, created);
    // Conditional on the version read: an object reflection wrote during this cycle keeps that write, and the
    // next cycle sees it as changed.
    const { conflicts } = await writeObjects(
      store,
      created.map((object, i) => ({
        object,
        embedding: vectors[i] ?? null,
        embeddingModel: this.context.embedder?.model ?? null,
      })),
      updated,
      { waitForRefresh: false },
    );
    // Like their vectors, the lists of objects this cycle invalidated go: nothing will read them again. (Erasure
    // removes its objects' lists itself; a demoted object keeps its list for when it is revived.)
    const skipped = new Set(conflicts);
    const dropped = plan.writes
      .filter((o) => o.state === "invalidated" && !skipped.has(o.id) && lists.has(o.id))
      .map((o) => o.id);
    if (dropped.length > 0) {
      await bulk(
        store,
        dropped.map((id) => ({ delete: { _index: indices.neighbours, _id: id } })),
        { timeoutMs: 120_000 },
      );
    }
    const finishedAt = this.context.clock().toISOString();
    const records = reviewAndPromotionRecords(plan, now);
    for (const proposal of plan.proposals) {
      records.push(...(await proposalRecords(store, indices, proposal, progress.cycleId, stored, now)));
    }
    lap("write");
    const report = {
      ...dreamReport(input, plan, finishedAt, { writeConflicts: conflicts.length }),
      timingsMs,
    };
    records.push({
      op: "index",
      record: {
        kind: "dreamReport",
        id: report.cycleId,
        state: "succeeded",
        cycleId: report.cycleId,
        createdAt: report.startedAt,
        updatedAt: finishedAt,
        body: report,
      },
    });
    await writeRecords(store, indices, records);
    // One refresh for everything the cycle wrote, so its outcome is searchable when the report is returned.
    await storeRequest(
      store,
      "POST",
      `/${[store.indices.knowledge, store.indices.vectors, indices.records, indices.neighbours].join(",")}/_refresh`,
    );
    progress.phase = "done";
    return report;
  }
}
