import type { MemoryDocument, Principal } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { redactText } from "../core/redaction.js";
import { gone } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { refusalMessage, refusedWrites } from "../knowledge/tombstones.js";
import { type CortexStore, request as storeRequest } from "../store/client.js";
import { getDocument, type SearchResult } from "../store/reads.js";
import {
  type Coordinates,
  clampAxis,
  coordinatesFor,
  dayOffset,
  decayScore,
  epochDay,
  mayRecall,
  redactDocument,
} from "./document.js";
import { locateTranscripts } from "./locate.js";
import { ArchiveNotFoundError, type ArchiveStore } from "./store.js";

/**
 * What the archive routes do: file a document with its summary in the summary index, search the summaries,
 * recall a document under its consent (erasure is erasure.ts). Documents live in the ArchiveStore on disk,
 * summaries in OpenSearch.
 */

type ArchiveContext = Pick<CortexContext, "store" | "clock">;

/** One entry of the archive's summary index: a card-catalogue line pointing at the immutable document. */
export interface IndexEntry {
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
  /** The people whose turns it holds (messages' authorId), so an erasure finds documents they do not own. */
  authorIds?: string[] | undefined;
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
  filing: ArchiveFiling,
): Promise<{ hash: string; stored: boolean; coordinates: Coordinates }> {
  const now = clock().toISOString();
  // Redacted before it is hashed: the hash addresses what is kept, and nothing live is kept.
  const document = redactDocument(filing.document);
  const summary = redactText(filing.summary);
  const { placement, clusterId } = filing;
  await refuseErased(store, document);
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
    authorIds: authorsOf(document),
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

/**
 * The principal's summaries (never secret ones) by text and coordinates, best match or newest first. A query
 * matches a summary's words, and finds a transcript by any of its passages too (locate.ts): the two rankings are
 * fused by reciprocal rank. Either way only summary entries the principal owns come back.
 */
export async function searchSummaries(
  context: ArchiveContext & Pick<CortexContext, "embedder">,
  where: MaturationIndices,
  { principal, query, x, y, z, limit }: SummarySearch,
): Promise<SummaryHit[]> {
  const { store, clock } = context;
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
  const search = async (body: Record<string, unknown>) =>
    (await storeRequest<SearchResult<IndexEntry>>(store, "POST", `/${where.archive}/_search`, body)).body.hits
      .hits;
  let entries: IndexEntry[];
  if (query) {
    const [bySummary, located] = await Promise.all([
      search({
        size: limit,
        query: { bool: { filter, must: { match: { summary: query } } } },
        sort: [{ _score: "desc" }, { hash: "asc" }],
      }),
      locateTranscripts(context, query, [principal.userId], limit),
    ]);
    const byPassage =
      located.length === 0
        ? []
        : await search({
            size: located.length,
            query: { bool: { filter: [...filter, { ids: { values: located } }] } },
          });
    const rankOf = new Map(located.map((hash, rank) => [hash, rank]));
    const fused = new Map<string, { entry: IndexEntry; score: number }>();
    const add = (entry: IndexEntry, rank: number) => {
      const known = fused.get(entry.hash);
      fused.set(entry.hash, { entry, score: (known?.score ?? 0) + 1 / (61 + rank) });
    };
    for (const [rank, hit] of bySummary.entries()) add(hit._source, rank);
    for (const hit of byPassage) add(hit._source, rankOf.get(hit._source.hash) ?? located.length);
    entries = [...fused.values()]
      .sort((a, b) => b.score - a.score || (a.entry.hash < b.entry.hash ? -1 : 1))
      .slice(0, limit)
      .map(({ entry }) => entry);
  } else {
    entries = (
      await search({
        size: limit,
        query: { bool: { filter } },
        sort: [{ createdAt: "desc" }, { hash: "asc" }],
      })
    ).map((hit) => hit._source);
  }
  return entries.map((e) => ({
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

/** Who wrote the document's user turns, by authorId, sorted. */
export function authorsOf(document: MemoryDocument): string[] {
  return [
    ...new Set(document.messages.flatMap((m) => (m.authorId === undefined ? [] : [m.authorId]))),
  ].sort();
}

/**
 * A document holding words of an erased person from before their erasure (its range began at or before it, or a
 * message of it did) is refused whole: storing it would undo the erasure. Owners and authors are both checked.
 */
async function refuseErased(store: CortexStore, document: MemoryDocument): Promise<void> {
  const times = [document.createdAt, ...document.messages.flatMap((m) => (m.at === undefined ? [] : [m.at]))];
  const earliest = times.reduce((a, b) => (Date.parse(a) <= Date.parse(b) ? a : b));
  const people = new Set([...document.consentScope.ownerIds, ...authorsOf(document)]);
  const refused = await refusedWrites(
    store,
    [...people].map((userId) => ({ userId, observedAt: earliest, at: "document" })),
  );
  if (refused.length > 0) throw gone(refusalMessage(refused.slice(0, 1)));
}
