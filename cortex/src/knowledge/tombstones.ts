/**
 * Erasure tombstones: one document per erased person in `<prefix>-erasures`, under a digest of their id
 * (core/erasure.ts erasureSubject), with the time of their latest erasure. Ingest, reflect and the archive refuse a
 * write for that person observed at or before it, so a capture queue the gateway flushes after the erasure cannot
 * bring the data back. In OpenSearch, not in memory: a restarted Cortex refuses the same writes.
 */
import { erasureSubject, refusedByErasure } from "../core/erasure.js";
import { type CortexStore, request } from "../store/client.js";
import type { SearchResult } from "../store/reads.js";

export interface Tombstone {
  subject: string;
  /** The latest erasure; writes observed at or before it are refused. */
  erasedAt: string;
  erasures: number;
}

export function tombstoneIndex(store: CortexStore): string {
  return store.indices.knowledge.replace(/-knowledge$/, "-erasures");
}

const mappings = {
  dynamic: false,
  properties: { subject: { type: "keyword" }, erasedAt: { type: "date" }, erasures: { type: "integer" } },
};

/**
 * Record (or move forward) the person's tombstone. Durable when this resolves, and seen at once by the reads below
 * (a GET by id does not wait for a refresh).
 */
export function recordTombstone(store: CortexStore, userId: string, erasedAt: string): Promise<void> {
  return recordSubjectTombstone(store, erasureSubject(userId), erasedAt);
}

/** Create the tombstone index if it is missing (a restore writes a backup's tombstones into it). */
export async function ensureTombstoneIndex(store: CortexStore): Promise<string> {
  const index = tombstoneIndex(store);
  const exists = await request(store, "HEAD", `/${index}`, undefined, { ignore: [404] });
  if (exists.statusCode === 404) {
    const settings = { index: { number_of_shards: 1, number_of_replicas: 0 } };
    await request(store, "PUT", `/${index}`, { settings, mappings }, { ignore: [400], retries: 2 });
  }
  return index;
}

/** Record (or move forward) a tombstone known by its subject only (a restore replaying a later erasure). */
export async function recordSubjectTombstone(
  store: CortexStore,
  subject: string,
  erasedAt: string,
): Promise<void> {
  const index = await ensureTombstoneIndex(store);
  await request(store, "POST", `/${index}/_update/${subject}?retry_on_conflict=5`, {
    script: {
      lang: "painless",
      // A later erasure moves the line forward; an earlier clock reading never moves it back.
      source:
        "if (ctx._source.erasedAt.compareTo(params.at) < 0) { ctx._source.erasedAt = params.at; } ctx._source.erasures += 1;",
      params: { at: erasedAt },
    },
    upsert: { subject, erasedAt, erasures: 1 } satisfies Tombstone,
  });
}

/** The latest erasure of each of these people that has one (by user id). */
export async function erasuresOf(
  store: CortexStore,
  userIds: Iterable<string>,
): Promise<Map<string, string>> {
  const bySubject = new Map([...new Set(userIds)].map((id) => [erasureSubject(id), id]));
  const found = new Map<string, string>();
  if (bySubject.size === 0) return found;
  const { statusCode, body } = await request<{
    docs?: { _id: string; found: boolean; _source?: Tombstone }[];
  }>(store, "POST", `/${tombstoneIndex(store)}/_mget`, { ids: [...bySubject.keys()] }, { ignore: [404] });
  // No index yet: nobody was ever erased.
  if (statusCode === 404) return found;
  for (const doc of body.docs ?? []) {
    const userId = bySubject.get(doc._id);
    if (doc.found && doc._source && userId !== undefined) found.set(userId, doc._source.erasedAt);
  }
  return found;
}

export interface ObservedWrite {
  userId: string;
  observedAt: string;
  /** Where the write sits in its request (an event index, a field path), for the refusal message. */
  at: string;
}

/** The writes a tombstone refuses, each with the erasure that refuses it; empty when all may go ahead. */
export async function refusedWrites(
  store: CortexStore,
  writes: readonly ObservedWrite[],
): Promise<(ObservedWrite & { erasedAt: string })[]> {
  const erasures = await erasuresOf(
    store,
    writes.map((w) => w.userId),
  );
  if (erasures.size === 0) return [];
  return writes.flatMap((write) => {
    const erasedAt = erasures.get(write.userId);
    return refusedByErasure(write.observedAt, erasedAt) ? [{ ...write, erasedAt: erasedAt as string }] : [];
  });
}

/** The 410 message: which writes, and the erasure that refuses them (not the person's id: the caller sent it). */
export function refusalMessage(refused: readonly (ObservedWrite & { erasedAt: string })[]): string {
  const first = refused[0];
  const where = refused.map((r) => r.at).join(", ");
  return `${where}: data of a person erased at ${first?.erasedAt ?? "?"}, observed at or before the erasure (${
    first?.observedAt ?? "?"
  }); refused for good, do not retry`;
}

/** Every tombstone (a backup copies them into its destination; a household has far fewer than a page of people). */
export async function readTombstones(store: CortexStore): Promise<{ subject: string; erasedAt: string }[]> {
  const { statusCode, body } = await request<SearchResult<Tombstone>>(
    store,
    "POST",
    `/${tombstoneIndex(store)}/_search`,
    { size: 10_000, sort: [{ subject: "asc" }], _source: ["subject", "erasedAt"] },
    { ignore: [404] },
  );
  if (statusCode === 404) return [];
  return body.hits.hits.map((hit) => ({ subject: hit._source.subject, erasedAt: hit._source.erasedAt }));
}
