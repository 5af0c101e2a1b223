/**
 * The consistency check (POST /admin/check): every store read whole (knowledge, vectors, transcript chunks, the
 * archive and its summary index, proposals, the workspace repository), compared by core/consistency.ts. A
 * finding must show in two reads a refresh apart: a write that lands between reading two stores looks
 * inconsistent for a moment and is not reported. It runs as a shared section of the erasure gate, so it never
 * reads an erasure half done, and concurrent requests share one run.
 */
import type { ConsistencyFinding, ConsistencyReport, KnowledgeObject } from "@remram/contract";
import type { CortexContext } from "../context.js";
import {
  consistencyReport,
  findInconsistencies,
  type GateFields,
  type StoresSnapshot,
} from "../core/consistency.js";
import { scanFields } from "../knowledge/erasure.js";
import { erasureGate } from "../knowledge/erasure-gate.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { request } from "../store/client.js";
import { knowledgeObjectFields, vectorGateFieldNames, vectorGateFields } from "../store/documents.js";

/** What the check reads of the archive (archive/store.ts). */
export interface CheckedArchive {
  entries(): readonly { hash: string }[];
  findCorrupt(): Promise<readonly { hash: string; problem?: string | undefined }[]>;
}

/** What the check reads of the workspace repository (promote/repository-check.ts). */
export interface CheckedRepository {
  problems: { id: string; detail: string }[];
  promotedProposalIds: Set<string>;
  commits: number;
}

export interface CheckSources {
  archive: () => Promise<CheckedArchive>;
  repository: () => Promise<CheckedRepository>;
}

async function readStores(
  { store }: Pick<CortexContext, "store">,
  indices: MaturationIndices,
  sources: CheckSources,
): Promise<StoresSnapshot> {
  const knowledge = new Map<string, GateFields>();
  for await (const hits of scanFields<KnowledgeObject>(
    store,
    store.indices.knowledge,
    { match_all: {} },
    knowledgeObjectFields,
  )) {
    for (const hit of hits) knowledge.set(hit._source.id, vectorGateFields(hit._source));
  }
  const vectors = new Map<string, GateFields>();
  for await (const hits of scanFields<GateFields & { id: string }>(
    store,
    store.indices.vectors,
    { match_all: {} },
    vectorGateFieldNames,
  )) {
    for (const hit of hits) vectors.set(hit._id, hit._source);
  }
  const transcriptChunks: StoresSnapshot["transcriptChunks"][number][] = [];
  for await (const hits of scanFields<{ id: string; sourceId: string }>(
    store,
    store.indices.chunks,
    { term: { sourceKind: "transcript" } },
    ["id", "sourceId"],
  )) {
    transcriptChunks.push(...hits.map((hit) => hit._source));
  }
  const { body: chunkCount } = await request<{ count: number }>(
    store,
    "GET",
    `/${store.indices.chunks}/_count`,
  );
  const archiveEntries: string[] = [];
  for await (const hits of scanFields<{ hash: string }>(
    store,
    indices.archive,
    { match_all: {} },
    ["hash"],
    "hash",
  )) {
    archiveEntries.push(...hits.map((hit) => hit._source.hash));
  }
  const proposals: StoresSnapshot["proposals"][number][] = [];
  type ProposalFields = { id: string; state?: string; body?: { sourceKnowledgeIds?: string[] } };
  for await (const hits of scanFields<ProposalFields>(
    store,
    indices.records,
    { term: { kind: "proposal" } },
    ["id", "state", "body.sourceKnowledgeIds"],
  )) {
    proposals.push(
      ...hits.map(({ _source: record }) => ({
        id: record.id,
        state: record.state ?? "",
        sourceKnowledgeIds: record.body?.sourceKnowledgeIds ?? [],
      })),
    );
  }
  const archive = await sources.archive();
  const archived = new Set(archive.entries().map((entry) => entry.hash));
  const corruptDocuments = (await archive.findCorrupt()).map((result) => ({
    hash: result.hash,
    problem: (result.problem ?? "does not match its hash").slice(0, 512),
  }));
  const repository = await sources.repository();
  return {
    knowledge,
    vectors,
    transcriptChunks,
    chunkCount: chunkCount.count,
    archived,
    corruptDocuments,
    archiveEntries,
    proposals,
    promotedInHistory: repository.promotedProposalIds,
    commits: repository.commits,
    repositoryProblems: repository.problems,
  };
}

const findingKey = (finding: ConsistencyFinding) => `${finding.kind}\u0000${finding.id}`;

export async function checkConsistency(
  context: Pick<CortexContext, "store" | "clock">,
  indices: MaturationIndices,
  sources: CheckSources,
): Promise<ConsistencyReport> {
  const startedAt = context.clock();
  const started = performance.now();
  let stores = await readStores(context, indices, sources);
  let findings = findInconsistencies(stores);
  if (findings.length > 0) {
    // Confirm: make every acknowledged write visible, read again, keep what both reads found.
    const { store } = context;
    const all = [
      store.indices.knowledge,
      store.indices.vectors,
      store.indices.chunks,
      indices.archive,
      indices.records,
    ];
    await request(store, "POST", `/${all.join(",")}/_refresh`);
    const first = new Set(findings.map(findingKey));
    stores = await readStores(context, indices, sources);
    findings = findInconsistencies(stores).filter((finding) => first.has(findingKey(finding)));
  }
  return consistencyReport(stores, findings, startedAt, performance.now() - started);
}

/** One check at a time per Cortex: a request arriving while one runs gets that run's report. */
export function consistencyChecker(
  context: Pick<CortexContext, "store" | "clock">,
  indices: () => Promise<MaturationIndices>,
  sources: CheckSources,
): () => Promise<ConsistencyReport> {
  let running: Promise<ConsistencyReport> | undefined;
  return () => {
    running ??= erasureGate(context.store)
      .shared("consistency check", async () => checkConsistency(context, await indices(), sources))
      .finally(() => {
        running = undefined;
      });
    return running;
  };
}
