import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { Gauge, Histogram, type Registry } from "prom-client";
import type { CortexContext } from "../app.js";
import type { ProposalDraft } from "../promote/proposal.js";
import { addLink, type MaturingObject } from "../reflect/knowledge.js";
import { applyMaturing, scopeOf, toMaturing } from "../reflect/mapping.js";
import {
  cosineFromScore,
  type DocumentVersion,
  loadObjects,
  loadVectors,
  type ObjectUpdate,
  scanObjects,
  scopeFilter,
  writeObjects,
} from "../reflect/repository.js";
import type { CandidateDimension } from "../schemas/dimensions.js";
import type { KnowledgeObject } from "../schemas/knowledge.js";
import {
  bulk,
  listCandidateDimensions,
  multiSearch,
  scanDocuments,
  request as storeRequest,
  vectorDocument,
} from "../store/opensearch.js";
import {
  type DreamInput,
  type DreamReport,
  defaultDreamOptions,
  dreamCountNames,
  dreamReport,
  planDreamCycle,
} from "./cycle.js";
import {
  type NeighbourList,
  neighbourListFrom,
  neighbourLookupOrder,
  neighboursPerObject,
  pairsFromNeighbourLists,
} from "./neighbours.js";
import { getRecord, listRecords, type MaturationIndices, writeRecords } from "./records.js";

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

export interface ProposalRecordBody extends ProposalDraft {
  scope: MaturingObject["scope"];
  privacy: KnowledgeObject["privacy"];
  cycleId: string;
  decision?: { decision: "denied"; by: string; reason?: string | undefined; at: string } | undefined;
  promotion?: { commitId: string; approvedBy: string; at: string } | undefined;
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

/** Objects per k-NN multi-search. */
const neighbourBatch = 64;

export interface DreamSettings {
  workspaceDir: string;
  artifactsDir: string;
  /** Stop looking up neighbours after this long; the report counts what is left for the next cycle. */
  timeLimitMs: number;
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

  /** Start a cycle; throws DreamBusyError while another runs. Resolves with the stored report. */
  run(request: DreamRequest): { cycleId: string; report: Promise<DreamReport> } {
    if (this.current !== null) throw new DreamBusyError(this.current.cycleId);
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
    const report = this.cycle(this.current, request).then(
      (result) => {
        this.finish(started, "succeeded");
        for (const name of dreamCountNames) this.lastCounts.set({ count: name }, result.counts[name]);
        return result;
      },
      (error: unknown) => {
        this.finish(started, "failed");
        throw error;
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

  private async cycle(progress: DreamProgress, request: DreamRequest): Promise<DreamReport> {
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
    const graph = await this.lookUpNeighbours(indices, lookups, stored, deadline, progress, now);
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
    const created: KnowledgeObject[] = [];
    const updated: ObjectUpdate[] = [];
    // A principle founded again under the id of one that was demoted revives it, keeping its evidence links.
    const refounded = await loadObjects(
      store,
      plan.writes.filter((o) => !stored.has(o.id)).map((o) => o.id),
    );
    for (const object of plan.writes) {
      const base = stored.get(object.id);
      if (base) {
        updated.push({
          object: applyMaturing(base.object, object),
          previous: base.object,
          readAt: base.version,
        });
        continue;
      }
      const demoted = refounded.get(object.id);
      if (demoted) {
        const before = toMaturing(demoted);
        const revived = {
          ...object,
          links: before.links.reduce((all, link) => addLink(all, link), object.links),
          createdAt: before.createdAt,
          reinforcementCount: before.reinforcementCount + 1,
        };
        updated.push({ object: applyMaturing(demoted, revived), previous: demoted });
        continue;
      }
      // A new principle: provenance "dream"; privacy and consent from its most restrictive evidence.
      const evidence = object.links.flatMap((l) =>
        l.relation === "evidence" ? [stored.get(l.targetId)?.object] : [],
      );
      const template = evidence.find((e) => e !== undefined);
      if (!template) continue;
      created.push(
        applyMaturing(
          {
            ...template,
            provenance: {
              key: `dream:${object.id}`,
              source: "dream",
              sourceTurnIds: [...object.sourceTurnIds],
              observedAt: object.createdAt,
              ingestedAt: object.createdAt,
            },
            privacy: mostRestrictive(evidence.flatMap((e) => (e ? [e.privacy] : []))),
            usageCount: 0,
            lastUsedAt: null,
          },
          object,
        ),
      );
    }
    const vectors = await this.principleVectors(created);
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
    const records: RecordWrite[] = [];
    for (const review of plan.reviewItems) {
      records.push({
        op: "create",
        record: {
          kind: "review",
          id: review.id,
          state: "open",
          createdAt: now,
          updatedAt: now,
          body: review,
        },
      });
    }
    for (const promotion of plan.dimensionPromotions) {
      records.push({
        op: "index",
        record: {
          kind: "dimensionPromotion",
          id: promotion.name,
          state: "proposed",
          createdAt: now,
          updatedAt: now,
          body: promotion,
        },
      });
    }
    for (const proposal of plan.proposals) {
      records.push(...(await this.proposalRecords(indices, proposal, progress.cycleId, stored, now)));
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

  /** A proposal's record, and stale pending proposals for the same path marked superseded. Nothing for a known id. */
  private async proposalRecords(
    indices: MaturationIndices,
    proposal: ProposalDraft,
    cycleId: string,
    stored: ReadonlyMap<string, { object: KnowledgeObject }>,
    now: string,
  ): Promise<RecordWrite[]> {
    const { store } = this.context;
    // A denied proposal keeps its id, so the same change is never proposed again.
    const existing = await getRecord<ProposalRecordBody>(store, indices, "proposal", proposal.id);
    if (existing) return [];
    const stale = await listRecords<ProposalRecordBody>(store, indices, "proposal", {
      state: "pending",
      artifactPath: proposal.artifactPath,
    });
    const sources = proposal.sourceKnowledgeIds.flatMap((id) => {
      const object = stored.get(id)?.object;
      return object ? [object] : [];
    });
    const first = sources[0];
    return [
      ...stale.map((record) => ({
        op: "index" as const,
        record: { ...record, state: "superseded", updatedAt: now, artifactPath: proposal.artifactPath },
      })),
      {
        op: "create",
        record: {
          kind: "proposal",
          id: proposal.id,
          state: "pending",
          artifactPath: proposal.artifactPath,
          cycleId,
          createdAt: now,
          updatedAt: now,
          body: {
            ...proposal,
            scope: first ? toMaturing(first).scope : { kind: "shared", ownerIds: [] },
            privacy: mostRestrictive(sources.map((s) => s.privacy)),
            cycleId,
          },
        },
      },
    ];
  }

  private async principleVectors(created: readonly KnowledgeObject[]): Promise<(number[] | null)[]> {
    if (this.context.embedder === null || created.length === 0) return created.map(() => null);
    try {
      return await this.context.embedder.embedMany(created.map((o) => o.statement));
    } catch {
      return created.map(() => null);
    }
  }

  /**
   * k-NN lists for `ids`, in that order, until the deadline: a batch's vectors are read (and, for objects stored
   * without one, made when a model is there), looked up in one multi-search within each object's own scope, and
   * the lists stored. What the deadline leaves is looked up by a later cycle.
   */
  private async lookUpNeighbours(
    indices: MaturationIndices,
    ids: readonly string[],
    stored: ReadonlyMap<string, { object: KnowledgeObject }>,
    deadline: number,
    progress: DreamProgress,
    now: string,
  ): Promise<{ built: NeighbourList[]; vectorsBackfilled: number }> {
    const { store, embedder } = this.context;
    const built: NeighbourList[] = [];
    let vectorsBackfilled = 0;
    let canEmbed = embedder !== null;
    for (let start = 0; start < ids.length && Date.now() < deadline; start += neighbourBatch) {
      const batch = ids.slice(start, start + neighbourBatch).flatMap((id) => {
        const object = stored.get(id)?.object;
        return object ? [object] : [];
      });
      const vectors = await loadVectors(
        store,
        batch.map((o) => o.id),
      );
      const lacking = batch.filter((object) => !vectors.has(object.id));
      const lists: NeighbourList[] = [];
      if (lacking.length > 0 && embedder !== null && canEmbed) {
        // Stored while the model was down: embed now, so the object takes part in semantic retrieval and dream.
        try {
          const made = await embedder.embedMany(lacking.map((o) => o.statement));
          await bulk(
            store,
            lacking.flatMap((object, i) => {
              const vector = made[i];
              if (vector === undefined) return [];
              vectors.set(object.id, vector);
              return [
                { index: { _index: store.indices.vectors, _id: object.id } },
                vectorDocument(object, vector, embedder.model),
              ];
            }),
            { refresh: "true", timeoutMs: 60_000 },
          );
          vectorsBackfilled += made.length;
        } catch {
          canEmbed = false;
        }
      } else if (embedder === null) {
        for (const object of lacking)
          lists.push({ id: object.id, computedAt: now, vector: false, neighbours: [] });
      }
      const searched = batch.filter((object) => vectors.has(object.id));
      const responses = await multiSearch<never>(
        store,
        searched.map((object) => ({
          index: store.indices.vectors,
          body: {
            size: neighboursPerObject + 1,
            _source: false,
            query: {
              knn: {
                embedding: {
                  vector: vectors.get(object.id),
                  k: neighboursPerObject + 1,
                  filter: {
                    bool: { filter: [...scopeFilter(scopeOf(object)), { term: { status: "active" } }] },
                  },
                },
              },
            },
          },
        })),
        30_000,
      );
      responses.forEach((response, i) => {
        const object = searched[i];
        if (!object || response.error) return;
        const hits = response.hits.hits.map((hit) => ({
          id: hit._id,
          similarity: cosineFromScore(hit._score ?? 0),
        }));
        lists.push(neighbourListFrom(object.id, hits, now));
      });
      if (lists.length > 0) {
        await bulk(
          store,
          lists.flatMap((list) => [{ index: { _index: indices.neighbours, _id: list.id } }, list]),
          { timeoutMs: 60_000 },
        );
      }
      built.push(...lists);
      progress.neighbourListsBuilt = built.length;
      this.progress.set({ measure: "neighbourListsBuilt" }, built.length);
    }
    return { built, vectorsBackfilled };
  }
}

type RecordWrite = Parameters<typeof writeRecords>[2][number];

const restriction: KnowledgeObject["privacy"][] = ["public", "household", "private", "secret"];

function mostRestrictive(levels: readonly KnowledgeObject["privacy"][]): KnowledgeObject["privacy"] {
  return levels.reduce<KnowledgeObject["privacy"]>(
    (most, level) => (restriction.indexOf(level) > restriction.indexOf(most) ? level : most),
    "public",
  );
}

/** Markdown files under the artifacts folder, by workspace-relative path (empty when the folder is missing). */
export async function readArtifacts(
  workspaceDir: string,
  artifactsDir: string,
): Promise<Map<string, string>> {
  const files = new Map<string, string>();
  const root = join(workspaceDir, artifactsDir);
  let entries: { name: string; parentPath: string; isFile(): boolean }[];
  try {
    entries = await readdir(root, { recursive: true, withFileTypes: true });
  } catch {
    return files;
  }
  for (const entry of entries) {
    if (!entry.isFile() || !entry.name.endsWith(".md")) continue;
    const path = join(entry.parentPath, entry.name);
    files.set(relative(workspaceDir, path), await readFile(path, "utf8"));
  }
  return files;
}
