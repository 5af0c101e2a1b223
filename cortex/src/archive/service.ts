import type { MemoryDocument, Principal } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { createRecord, type MaturationIndices } from "../knowledge/records.js";
import { type CortexStore, request as storeRequest } from "../store/client.js";
import { getDocument, type SearchResult } from "../store/reads.js";
import { bulk } from "../store/writes.js";
import {
  type Coordinates,
  clampAxis,
  coordinatesFor,
  dayOffset,
  decayScore,
  epochDay,
  mayRecall,
  sha256Hex,
} from "./document.js";
import { ArchiveNotFoundError, type ArchiveStore } from "./store.js";

/**
 * What the archive routes do: file a document with its summary in the summary index, search the summaries,
 * recall a document under its consent, and erase a user's data. Documents live in the ArchiveStore on disk,
 * summaries in OpenSearch.
 */

type ArchiveContext = Pick<CortexContext, "store" | "clock">;

/** One entry of the archive's summary index: a card-catalogue line pointing at the immutable document. */
interface IndexEntry {
  hash: string;
  summary: string;
  epochDay: number;
  y: number;
  z: number;
  clusterId: string | null;
  decayScore: number;
  reinforcementCount: number;
  lastAccessedAt: string;
  ownerIds: string[];
  privacy: string;
  allowRecall: boolean;
  sourceSession: string;
  sourceChannel: string;
  createdAt: string;
  archivedAt: string;
}

export interface ArchiveFiling {
  document: MemoryDocument;
  summary: string;
  /** Where the summariser placed it; y defaults from privacy, z to 0. */
  placement?: { y?: number | undefined; z?: number | undefined } | undefined;
  clusterId?: string | undefined;
}

/** Store the document under its hash and index its summary; the first summary for a hash stays. */
export async function archiveDocument(
  { store, clock }: ArchiveContext,
  where: MaturationIndices,
  archive: () => Promise<ArchiveStore>,
  { document, summary, placement, clusterId }: ArchiveFiling,
): Promise<{ hash: string; stored: boolean; coordinates: Coordinates }> {
  const now = clock().toISOString();
  const { hash, stored } = await (await archive()).put(document);
  const coordinates = coordinatesFor(document, now, placement);
  const entry: IndexEntry = {
    hash,
    summary,
    epochDay: epochDay(document.createdAt),
    y: coordinates.y,
    z: coordinates.z,
    clusterId: clusterId ?? null,
    decayScore: 1,
    reinforcementCount: 0,
    lastAccessedAt: now,
    ownerIds: [...document.consentScope.ownerIds].sort(),
    privacy: document.consentScope.privacy,
    allowRecall: document.consentScope.allowRecall,
    sourceSession: document.source.sessionId,
    sourceChannel: document.source.channel,
    createdAt: document.createdAt,
    archivedAt: now,
  };
  // Archiving the same content again changes nothing.
  await storeRequest(store, "PUT", `/${where.archive}/_create/${hash}?refresh=wait_for`, entry, {
    ignore: [409],
  });
  return { hash, stored, coordinates };
}

type Range = { min: number; max: number };

export interface SummarySearch {
  principal: Principal;
  query?: string | undefined;
  /** Day offsets from today. */
  x?: Range | undefined;
  y?: Range | undefined;
  z?: Range | undefined;
  limit: number;
}

export interface SummaryHit {
  hash: string;
  summary: string;
  coordinates: Coordinates;
  clusterId: string | null;
  decayScore: number;
  reinforcementCount: number;
  consent: { privacy: string; allowRecall: boolean };
  sourceSession: string;
  sourceChannel: string;
  createdAt: string;
}

/** The principal's summaries (never secret ones) by text and coordinates, best match or newest first. */
export async function searchSummaries(
  { store, clock }: ArchiveContext,
  where: MaturationIndices,
  { principal, query, x, y, z, limit }: SummarySearch,
): Promise<SummaryHit[]> {
  const now = clock().toISOString();
  const identities = [principal.userId, ...(principal.householdId ? [principal.householdId] : [])];
  const today = epochDay(now);
  const filter: unknown[] = [
    { terms: { ownerIds: identities } },
    { bool: { must_not: { term: { privacy: "secret" } } } },
  ];
  if (x) filter.push({ range: { epochDay: { gte: today + x.min, lte: today + x.max } } });
  if (y) filter.push({ range: { y: { gte: clampAxis(y.min), lte: clampAxis(y.max) } } });
  if (z) filter.push({ range: { z: { gte: clampAxis(z.min), lte: clampAxis(z.max) } } });
  const { body } = await storeRequest<SearchResult<IndexEntry>>(store, "POST", `/${where.archive}/_search`, {
    size: limit,
    query: { bool: { filter, ...(query ? { must: { match: { summary: query } } } : {}) } },
    sort: query ? [{ _score: "desc" }, { hash: "asc" }] : [{ createdAt: "desc" }, { hash: "asc" }],
  });
  return body.hits.hits.map(({ _source: e }) => ({
    hash: e.hash,
    summary: e.summary,
    coordinates: { x: dayOffset(e.createdAt, now), y: e.y, z: e.z },
    clusterId: e.clusterId,
    decayScore: decayScore({
      lastAccessedAt: e.lastAccessedAt,
      reinforcementCount: e.reinforcementCount,
      now,
    }),
    reinforcementCount: e.reinforcementCount,
    consent: { privacy: e.privacy, allowRecall: e.allowRecall },
    sourceSession: e.sourceSession,
    sourceChannel: e.sourceChannel,
    createdAt: e.createdAt,
  }));
}

const recallableLevels = ["public", "household", "private"] as const;

export type Recall =
  | { outcome: "missing" }
  | { outcome: "refused"; reason: string }
  | { outcome: "recalled"; document: MemoryDocument };

/**
 * The full document, when the principal's consent and the policy allow it. Recall reinforces the summary and
 * resets its decay clock. A file that no longer matches its hash throws ArchiveIntegrityError.
 */
export async function recallDocument(
  { store, clock }: ArchiveContext,
  where: MaturationIndices,
  archive: () => Promise<ArchiveStore>,
  hash: string,
  principal: Pick<Principal, "userId" | "householdId">,
): Promise<Recall> {
  const entry = await getDocument<IndexEntry>(store, where.archive, hash);
  if (!entry) return { outcome: "missing" };
  const decision = mayRecall(
    {
      ownerIds: entry.ownerIds,
      privacy: entry.privacy as (typeof recallableLevels)[number],
      allowRecall: entry.allowRecall,
    },
    principal,
    recallableLevels,
  );
  if (!decision.allowed) return { outcome: "refused", reason: decision.reason };
  try {
    const document = await (await archive()).get(hash);
    await storeRequest(store, "POST", `/${where.archive}/_update/${hash}`, {
      doc: { reinforcementCount: entry.reinforcementCount + 1, lastAccessedAt: clock().toISOString() },
    });
    return { outcome: "recalled", document };
  } catch (error) {
    if (error instanceof ArchiveNotFoundError) return { outcome: "missing" };
    throw error;
  }
}

export interface ErasureRequest {
  userId: string;
  requestedBy: string;
  reason: string;
}

export interface ErasureOutcome {
  auditId: string;
  knowledgeDeleted: number;
  chunksDeleted: number;
  archiveErased: number;
}

/**
 * Really remove a user's data: their knowledge objects (with vectors and neighbour lists), chunks, and the archived
 * documents they own alone. Audited by a record.
 */
export async function eraseUserData(
  { store, clock }: ArchiveContext,
  where: MaturationIndices,
  archive: () => Promise<ArchiveStore>,
  { userId, requestedBy, reason }: ErasureRequest,
): Promise<ErasureOutcome> {
  const byOwner = { query: { term: { "owner.userId": userId } } };
  const knowledgeDeleted = await deleteMatching(store, store.indices.knowledge, byOwner, [
    store.indices.vectors,
    where.neighbours,
  ]);
  const chunksDeleted = await deleteMatching(store, store.indices.chunks, byOwner);
  // Vectors whose object went before them (a write interrupted midway) go too.
  await deleteMatching(store, store.indices.vectors, byOwner);
  // Documents the user owns alone go entirely; shared ones stay (another owner's data is not theirs to erase).
  const { body } = await storeRequest<SearchResult<IndexEntry>>(store, "POST", `/${where.archive}/_search`, {
    size: 10_000,
    _source: ["hash", "ownerIds"],
    query: { term: { ownerIds: userId } },
  });
  const solelyOwned = body.hits.hits.map((h) => h._source).filter((e) => e.ownerIds.length === 1);
  const files = await archive();
  for (const entry of solelyOwned) {
    await files.erase(entry.hash);
    await storeRequest(store, "DELETE", `/${where.archive}/_doc/${entry.hash}?refresh=true`, undefined, {
      ignore: [404],
    });
  }
  const at = clock().toISOString();
  const auditId = `erasure-${sha256Hex(`${userId}\n${requestedBy}\n${at}`).slice(0, 16)}`;
  const outcome = { knowledgeDeleted, chunksDeleted, archiveErased: solelyOwned.length };
  await createRecord(store, where, {
    kind: "audit",
    id: auditId,
    state: "erasure",
    createdAt: at,
    updatedAt: at,
    body: { action: "erasure", userId, requestedBy, reason, at, ...outcome },
  });
  return { auditId, ...outcome };
}

/**
 * Delete every document of `index` matching `query`, and the documents of the same ids in `companions`; returns
 * how many matched. Search then bulk-delete by id: delete_by_query lives in the reindex module, which a minimal
 * node may lack.
 */
async function deleteMatching(
  store: CortexStore,
  index: string,
  query: { query: unknown },
  companions: readonly string[] = [],
): Promise<number> {
  let count = 0;
  for (;;) {
    const { body: found } = await storeRequest<SearchResult<unknown>>(store, "POST", `/${index}/_search`, {
      ...query,
      size: 1000,
      _source: false,
    });
    const ids = found.hits.hits.map((hit) => hit._id);
    if (ids.length === 0) return count;
    const lines = [index, ...companions].flatMap((target) =>
      ids.map((id) => ({ delete: { _index: target, _id: id } })),
    );
    await bulk(store, lines, { refresh: "true", timeoutMs: 120_000 });
    count += ids.length;
  }
}
