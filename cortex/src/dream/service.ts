import { randomUUID } from "node:crypto";
import type { CandidateDimension, KnowledgeObject } from "@remram/contract";
import { dreamCountNames } from "@remram/contract";
import type { Registry } from "prom-client";
import type { CortexContext } from "../context.js";
import { serviceUnavailable } from "../http-errors.js";
import { listRegisteredDimensions, registerDimensions } from "../knowledge/dimension-registry.js";
import { ErasureInProgressError, type ErasureLease, erasureGate } from "../knowledge/erasure-gate.js";
import { toMaturing } from "../knowledge/mapping.js";
import { listRecords, type MaturationIndices, writeRecords } from "../knowledge/records.js";
import { type DocumentVersion, loadObjects, scanObjects, writeObjects } from "../knowledge/repository.js";
import type { ChatModel } from "../store/chat-model.js";
import { request as storeRequest } from "../store/client.js";
import { listCandidateDimensions } from "../store/counters.js";
import { scanDocuments } from "../store/reads.js";
import { bulk } from "../store/writes.js";
import { readArtifacts } from "./artifacts.js";
import {
  beginDreamCycle,
  type DreamInput,
  type DreamPlan,
  type DreamReport,
  defaultDreamOptions,
  dreamReport,
  finishDreamCycle,
} from "./cycle.js";
import { candidateStats, governanceKeys } from "./cycle-input.js";
import {
  objectChanges,
  principleVectors,
  proposalRecords,
  reviewAndPromotionRecords,
} from "./cycle-writes.js";
import { type DreamMetrics, dreamMetrics } from "./metrics.js";
import { lookUpNeighbours } from "./neighbour-lookup.js";
import { type NeighbourList, neighbourLookupOrder, pairsFromNeighbourLists } from "./neighbours.js";
import { type WordingOutcomeKind, type WordingResult, wordPrinciples } from "./principle-wording.js";

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
  phase: "loading" | "neighbours" | "planning" | "wording" | "writing" | "done";
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
  /**
   * The reflection model that words new principles; null: they take their strongest evidence's statement
   * (Cortex without a reflection model configured).
   */
  principleModel: ChatModel | null;
  /** No new wording call starts after this long into the wording phase; the rest wait for the next cycle. */
  wordingBudgetMs: number;
  /** At most this many principles are sent to the model per cycle. */
  maxWordingsPerCycle: number;
}

interface CycleState {
  indices: MaturationIndices;
  input: DreamInput;
  plan: DreamPlan;
  stored: Map<string, { object: KnowledgeObject; version: DocumentVersion }>;
  /** Stored principles the plan founds again (demoted ones it revives), by id. */
  refounded: Map<string, KnowledgeObject>;
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
  private readonly metrics: DreamMetrics;

  constructor(
    private readonly context: CortexContext,
    private readonly indices: () => Promise<MaturationIndices>,
    private readonly settings: DreamSettings,
    registry: Registry,
  ) {
    this.metrics = dreamMetrics(registry);
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
    this.metrics.running.set(1);
    const started = process.hrtime.bigint();
    const report = this.cycle(this.current, request, lease).then(
      (result) => {
        this.finish(started, "succeeded");
        for (const name of dreamCountNames) {
          this.metrics.lastCounts.set({ count: name }, result.counts[name]);
          if (!request.dryRun) this.metrics.changes.inc({ count: name }, result.counts[name]);
        }
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
    this.metrics.duration.observe({ outcome }, Number(process.hrtime.bigint() - started) / 1e9);
    this.current = null;
    this.metrics.running.set(0);
    this.metrics.progress.reset();
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
      timingsMs[phase] = (timingsMs[phase] ?? 0) + Math.round(performance.now() - lapStarted);
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
          this.metrics.progress.set({ measure: "objectsLoaded" }, stored.size);
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
          this.metrics.progress.set({ measure: "neighbourListsBuilt" }, count);
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
    const [candidates, registered] = await Promise.all([
      listCandidateDimensions<CandidateDimension>(store, 1000),
      listRegisteredDimensions(store),
    ]);
    // In id order: the scan's order is the index's, and the plan must not depend on it.
    const objects = [...stored.values()]
      .map(({ object }) => toMaturing(object))
      .sort((a, b) => (a.id < b.id ? -1 : 1));
    const policy = this.context.policy.get();
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
      governance: governanceKeys([...stored.values()].map(({ object }) => object)),
      candidateDimensions: candidateStats(candidates, objects),
      canonicalDimensions: [...policy.dimensions.map((d) => d.name), ...registered.map((d) => d.name)],
      artifacts: await readArtifacts(this.settings.workspaceDir, this.settings.artifactsDir),
    };
    // A dry run asks no model: it counts the principles it would found, with their evidence's wording.
    const model = request.dryRun ? null : this.settings.principleModel;
    const stage = beginDreamCycle(input, {
      ...defaultDreamOptions,
      principles: { ...defaultDreamOptions.principles, requireWording: model !== null },
      dimensionPolicy: policy.candidatePromotion,
      decay: { ...defaultDreamOptions.decay, demotionThreshold: policy.eligibility.minConfidence },
      artifactsDir: this.settings.artifactsDir,
      maxProposals: request.dryRun ? 0 : request.maxProposals,
    });
    lap("plan");

    // A principle founded again under the id of a demoted one keeps its wording; the others go to the model.
    progress.phase = "wording";
    const refounded = await loadObjects(
      store,
      stage.drafts.filter((d) => !stored.has(d.id)).map((d) => d.id),
    );
    const known = new Map([...refounded].map(([id, object]) => [id, object.statement]));
    const wording: WordingResult =
      model === null
        ? { wordings: known, deferred: new Map(), worded: new Set() }
        : await wordPrinciples(model, stage.drafts, known, {
            deadline: Date.now() + this.settings.wordingBudgetMs,
            maxPrinciples: this.settings.maxWordingsPerCycle,
            observe: (outcome: WordingOutcomeKind) => this.metrics.wordings.inc({ outcome }),
          });
    lap("wording");
    const plan = finishDreamCycle(stage, wording.wordings, wording.deferred);
    const founded = new Set(plan.writes.filter((o) => o.type === "principle").map((o) => o.id));
    plan.counts.principlesWorded = [...wording.worded].filter((id) => founded.has(id)).length;
    lap("plan");
    if (request.dryRun) {
      return {
        ...dreamReport(input, plan, this.context.clock().toISOString(), { writeConflicts: 0 }),
        timingsMs,
      };
    }

    progress.phase = "writing";
    return lease.write(() =>
      this.write(progress, { indices, input, plan, stored, refounded, lists, timingsMs, lap }),
    );
  }

  /** The writing phase, one section of the erasure gate: an erasure waits for it, or it is refused. */
  private async write(
    progress: DreamProgress,
    { indices, input, plan, stored, refounded, lists, timingsMs, lap }: CycleState,
  ): Promise<DreamReport> {
    const { store } = this.context;
    const now = progress.startedAt;
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
    // Promoted dimensions join the registry: canonical from now on, beside the policy's own.
    await registerDimensions(
      store,
      plan.dimensionPromotions.map((d) => ({
        name: d.name,
        occurrences: d.occurrences,
        meanConfidence: d.meanConfidence,
        promotedAt: now,
        cycleId: progress.cycleId,
      })),
    );
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
      `/${[store.indices.knowledge, store.indices.vectors, store.indices.dimensions, indices.records, indices.neighbours].join(",")}/_refresh`,
    );
    progress.phase = "done";
    return report;
  }
}
