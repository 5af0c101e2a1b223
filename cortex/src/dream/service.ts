import { randomUUID } from "node:crypto";
import { readdir, readFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { Gauge, Histogram, type Registry } from "prom-client";
import type { CortexContext } from "../app.js";
import type { ProposalDraft } from "../promote/proposal.js";
import type { MaturingObject } from "../reflect/knowledge.js";
import { applyMaturing, toMaturing } from "../reflect/mapping.js";
import { loadObjects, type StoredKnowledge, scanObjects, writeObjects } from "../reflect/repository.js";
import type { CandidateDimension } from "../schemas/dimensions.js";
import type { KnowledgeObject } from "../schemas/knowledge.js";
import { listCandidateDimensions, multiSearch } from "../store/opensearch.js";
import type { SimilarPair } from "./contradictions.js";
import {
  type DreamReport,
  defaultDreamOptions,
  dreamCountNames,
  dreamReport,
  planDreamCycle,
} from "./cycle.js";
import { createRecord, getRecord, listRecords, type MaturationIndices, putRecord } from "./records.js";

/**
 * The dream cycle's shell: single-flight, incremental (objects changed since the last cycle started, plus a
 * decay sweep over everything), bounded in time, with progress in /metrics and in the status endpoint.
 */

export interface DreamRequest {
  dryRun: boolean;
  maxProposals: number;
  /** Ignore the last cycle and compare every pair. */
  full: boolean;
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
  pairsFound: number;
}

export class DreamBusyError extends Error {
  override readonly name = "DreamBusyError";
  constructor(readonly cycleId: string) {
    super(`dream cycle ${cycleId} is running`);
  }
}

const neighbourK = 8;
const neighbourFloor = 0.75;
const neighbourBatch = 64;

export interface DreamSettings {
  workspaceDir: string;
  artifactsDir: string;
  /** Stop looking up neighbours after this long; the cycle reports what it did not cover. */
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
      help: "Progress of the running dream cycle (objects loaded, neighbour pairs found)",
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
      pairsFound: 0,
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
    const deadline = Date.now() + this.settings.timeLimitMs;
    const previous = (
      await listRecords<DreamReport>(store, indices, "dreamReport", { state: "succeeded" }, 1)
    )[0];
    const changedSince = request.full ? undefined : previous?.body.startedAt;

    const stored = new Map<string, StoredKnowledge>();
    for await (const page of scanObjects(store, {
      bool: { must_not: { term: { status: "invalidated" } } },
    })) {
      for (const object of page) stored.set(object.id, object);
      progress.objectsLoaded = stored.size;
      this.progress.set({ measure: "objectsLoaded" }, stored.size);
    }

    progress.phase = "neighbours";
    const changedIds = [...stored.values()]
      .filter((o) => changedSince === undefined || o.updatedAt > changedSince)
      .map((o) => o.id);
    const pairs = await this.neighbourPairs(changedIds, deadline, progress);

    progress.phase = "planning";
    const candidates = await listCandidateDimensions<CandidateDimension>(store, 1000);
    const objects = [...stored.values()].map(toMaturing);
    const policy = this.context.policy.get();
    const confidenceByDimension = new Map<string, { sum: number; count: number }>();
    for (const object of objects) {
      for (const [name, values] of Object.entries(object.dimensions)) {
        if (values.length === 0) continue;
        const entry = confidenceByDimension.get(name) ?? { sum: 0, count: 0 };
        confidenceByDimension.set(name, { sum: entry.sum + object.confidence, count: entry.count + 1 });
      }
    }
    const input = {
      cycleId: progress.cycleId,
      now: progress.startedAt,
      changedSince,
      objects,
      pairs,
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
    const report = dreamReport(input, plan, this.context.clock().toISOString());
    if (request.dryRun) return report;

    progress.phase = "writing";
    const created: KnowledgeObject[] = [];
    const updated: KnowledgeObject[] = [];
    for (const object of plan.writes) {
      const base = stored.get(object.id);
      if (base) {
        updated.push(applyMaturing(base, object));
        continue;
      }
      // A new principle: provenance "dream"; privacy and consent from its most restrictive evidence.
      const evidence = object.links.flatMap((l) =>
        l.relation === "evidence" ? [stored.get(l.targetId)] : [],
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
    await writeObjects(
      store,
      created.map((object, i) => ({
        object,
        embedding: vectors[i] ?? null,
        embeddingModel: this.context.embedder?.model ?? null,
      })),
      updated,
    );
    const now = report.finishedAt;
    for (const review of plan.reviewItems) {
      await createRecord(store, indices, {
        kind: "review",
        id: review.id,
        state: "open",
        createdAt: now,
        updatedAt: now,
        body: review,
      });
    }
    for (const promotion of plan.dimensionPromotions) {
      await putRecord(store, indices, {
        kind: "dimensionPromotion",
        id: promotion.name,
        state: "proposed",
        createdAt: now,
        updatedAt: now,
        body: promotion,
      });
    }
    for (const proposal of plan.proposals)
      await this.storeProposal(indices, proposal, progress.cycleId, stored, now);
    await putRecord(store, indices, {
      kind: "dreamReport",
      id: report.cycleId,
      state: "succeeded",
      cycleId: report.cycleId,
      createdAt: report.startedAt,
      updatedAt: now,
      body: report,
    });
    progress.phase = "done";
    return report;
  }

  /** Pending proposals for one path are replaced by the newest; a denied proposal is never proposed again. */
  private async storeProposal(
    indices: MaturationIndices,
    proposal: ProposalDraft,
    cycleId: string,
    stored: ReadonlyMap<string, StoredKnowledge>,
    now: string,
  ): Promise<void> {
    const { store } = this.context;
    const existing = await getRecord<ProposalRecordBody>(store, indices, "proposal", proposal.id);
    if (existing) return;
    for (const stale of await listRecords<ProposalRecordBody>(store, indices, "proposal", {
      state: "pending",
      artifactPath: proposal.artifactPath,
    })) {
      await putRecord(store, indices, {
        ...stale,
        state: "superseded",
        updatedAt: now,
        artifactPath: proposal.artifactPath,
      });
    }
    const sources = proposal.sourceKnowledgeIds.flatMap((id) => {
      const object = stored.get(id);
      return object ? [object] : [];
    });
    const first = sources[0];
    await createRecord(store, indices, {
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
    });
  }

  private async principleVectors(created: readonly KnowledgeObject[]): Promise<(number[] | null)[]> {
    if (this.context.embedder === null || created.length === 0) return created.map(() => null);
    try {
      return await this.context.embedder.embedMany(created.map((o) => o.statement));
    } catch {
      return created.map(() => null);
    }
  }

  /** k-NN neighbours of each changed object that has an embedding, batched into multi-searches until the deadline. */
  private async neighbourPairs(
    ids: readonly string[],
    deadline: number,
    progress: DreamProgress,
  ): Promise<SimilarPair[]> {
    const { store } = this.context;
    const pairs = new Map<string, SimilarPair>();
    for (let start = 0; start < ids.length && Date.now() < deadline; start += neighbourBatch) {
      const batch = await loadObjects(store, ids.slice(start, start + neighbourBatch), true);
      const withVectors = [...batch.values()].filter((o) => Array.isArray(o.embedding));
      const responses = await multiSearch<KnowledgeObject>(
        store,
        withVectors.map((object) => ({
          index: store.indices.knowledge,
          body: {
            size: neighbourK + 1,
            _source: ["id"],
            query: {
              knn: {
                embedding: {
                  vector: object.embedding,
                  k: neighbourK + 1,
                  filter: { bool: { must_not: { term: { status: "invalidated" } } } },
                },
              },
            },
          },
        })),
        30_000,
      );
      responses.forEach((response, i) => {
        const origin = withVectors[i];
        if (!origin || response.error) return;
        for (const hit of response.hits.hits) {
          const similarity = 2 * (hit._score ?? 0) - 1;
          if (hit._id === origin.id || similarity < neighbourFloor) continue;
          const [aId, bId] = origin.id < hit._id ? [origin.id, hit._id] : [hit._id, origin.id];
          pairs.set(`${aId}|${bId}`, { aId, bId, similarity });
        }
      });
      progress.pairsFound = pairs.size;
      this.progress.set({ measure: "pairsFound" }, pairs.size);
    }
    return [...pairs.values()].sort((a, b) => (a.aId + a.bId < b.aId + b.bId ? -1 : 1));
  }
}

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
