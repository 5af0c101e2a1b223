/**
 * Erasure in the core indices: find what a person owns (knowledge objects, chunks), delete it with its vectors and
 * neighbour lists, cut the links other objects keep to it, move references from a rewritten archive document's old
 * hash to its new one, and drop the person's values from the candidate-dimension samples.
 */
import type { KnowledgeObject } from "@remram/contract";
import { type CortexStore, request } from "../store/client.js";
import type { SearchResult } from "../store/reads.js";
import { bulk } from "../store/writes.js";
import type { MaturationIndices } from "./records.js";
import { loadObjects, writeObjects } from "./repository.js";

/** What of the person's the indices held when the erasure began: ids, and what copies elsewhere would quote. */
export interface PersonItems {
  knowledgeIds: string[];
  chunkIds: string[];
  /** Statements (and claim objects): what artifacts and proposals quote. */
  statements: string[];
  dimensionValues: Set<string>;
}

const page = 1000;

/**
 * Every document of `index` matching `query`, a page at a time in the order of `sortField` (a unique keyword: `id`,
 * the archive's `hash`, a candidate dimension's `name`), with only the listed fields (all when none are listed).
 */
export async function* scanFields<S>(
  store: CortexStore,
  index: string,
  query: unknown,
  fields: readonly string[] | undefined,
  sortField = "id",
): AsyncGenerator<{ _id: string; _source: S }[]> {
  let after: unknown[] | undefined;
  for (;;) {
    const { body } = await request<SearchResult<S> & { hits: { hits: { sort?: unknown[] }[] } }>(
      store,
      "POST",
      `/${index}/_search`,
      {
        size: page,
        query,
        ...(fields && { _source: fields }),
        sort: [{ [sortField]: "asc" }],
        ...(after && { search_after: after }),
      },
      { timeoutMs: 60_000 },
    );
    const hits = body.hits.hits;
    if (hits.length === 0) return;
    yield hits;
    after = hits[hits.length - 1]?.sort;
    if (hits.length < page || after === undefined) return;
  }
}

/** The person's items stored at or before `cut` (a write accepted after the tombstone is theirs to keep). */
export function ownedBy(userId: string, cut: string): unknown {
  return {
    bool: {
      filter: [{ term: { "owner.userId": userId } }, { range: { "provenance.ingestedAt": { lte: cut } } }],
    },
  };
}

export async function collectPersonItems(
  store: CortexStore,
  userId: string,
  cut: string,
): Promise<PersonItems> {
  const items: PersonItems = { knowledgeIds: [], chunkIds: [], statements: [], dimensionValues: new Set() };
  const query = ownedBy(userId, cut);
  type Fields = Pick<KnowledgeObject, "id" | "statement" | "claim" | "dimensions">;
  for await (const hits of scanFields<Fields>(store, store.indices.knowledge, query, [
    "id",
    "statement",
    "claim",
    "dimensions",
  ])) {
    for (const { _id, _source } of hits) {
      items.knowledgeIds.push(_id);
      items.statements.push(_source.statement, ...(_source.claim ? [_source.claim.object] : []));
      for (const values of Object.values(_source.dimensions ?? {}))
        for (const v of values) items.dimensionValues.add(v);
    }
  }
  for await (const hits of scanFields<Pick<KnowledgeObject, "dimensions">>(
    store,
    store.indices.chunks,
    query,
    ["id", "dimensions"],
  )) {
    for (const { _id, _source } of hits) {
      items.chunkIds.push(_id);
      for (const values of Object.values(_source.dimensions ?? {}))
        for (const v of values) items.dimensionValues.add(v);
    }
  }
  return items;
}

/** Delete documents by id from each index; how many each index really held. */
export async function deleteByIds(
  store: CortexStore,
  indices: readonly string[],
  ids: readonly string[],
): Promise<number[]> {
  const deleted = indices.map(() => 0);
  for (let start = 0; start < ids.length; start += page) {
    const batch = ids.slice(start, start + page);
    const lines = indices.flatMap((index) => batch.map((id) => ({ delete: { _index: index, _id: id } })));
    const results = await bulk(store, lines, { refresh: "true", timeoutMs: 120_000 });
    results.forEach((result, position) => {
      const which = Math.floor(position / batch.length);
      if (result.status === 200) deleted[which] = (deleted[which] ?? 0) + 1;
    });
  }
  return deleted;
}

export interface DeletedItems {
  knowledge: number;
  vectors: number;
  chunks: number;
}

/** The person's objects with their vectors and neighbour lists, their chunks, and vectors an interrupted write left. */
export async function deletePersonItems(
  store: CortexStore,
  indices: MaturationIndices,
  userId: string,
  items: PersonItems,
): Promise<DeletedItems> {
  const { knowledge, vectors, chunks } = store.indices;
  const [knowledgeDeleted = 0, vectorsDeleted = 0] = await deleteByIds(
    store,
    [knowledge, vectors, indices.neighbours],
    items.knowledgeIds,
  );
  const [chunksDeleted = 0] = await deleteByIds(store, [chunks], items.chunkIds);
  // A vector whose object is gone (its write was cut short) is the person's too.
  let orphans = 0;
  for await (const hits of scanFields<unknown>(store, vectors, { term: { "owner.userId": userId } }, [
    "id",
  ])) {
    const alive = await loadObjects(
      store,
      hits.map((h) => h._id),
    );
    const [removed = 0] = await deleteByIds(
      store,
      [vectors],
      hits.map((h) => h._id).filter((id) => !alive.has(id)),
    );
    orphans += removed;
  }
  return { knowledge: knowledgeDeleted, vectors: vectorsDeleted + orphans, chunks: chunksDeleted };
}

/** Links other objects keep to erased ones (evidence, conflicts, supersession) go; returns how many. */
export async function unlinkErased(store: CortexStore, erasedIds: ReadonlySet<string>): Promise<number> {
  let removed = 0;
  const ids = [...erasedIds];
  for (let start = 0; start < ids.length; start += page) {
    const query = { terms: { "links.targetId": ids.slice(start, start + page) } };
    const linking: string[] = [];
    for await (const hits of scanFields<unknown>(store, store.indices.knowledge, query, ["id"])) {
      linking.push(...hits.map((h) => h._id));
    }
    const objects = await loadObjects(store, linking);
    const updates = [...objects.values()].map((previous) => {
      const links = previous.links.filter((link) => !erasedIds.has(link.targetId));
      removed += previous.links.length - links.length;
      return { object: { ...previous, links }, previous };
    });
    if (updates.length > 0) await writeObjects(store, [], updates);
  }
  return removed;
}

/**
 * Move every reference to a rewritten archive document from its old hash to the new one: chunks and objects that
 * name it (a transcript's sourceId, a dimension value, a provenance key) and summaries that cluster under it. A hash
 * is 64 hex digits, so replacing it throughout a document's JSON touches nothing else.
 */
export async function repointReferences(
  store: CortexStore,
  indices: MaturationIndices,
  from: string,
  to: string,
): Promise<number> {
  const naming = {
    bool: {
      should: [
        { term: { sourceId: from } },
        { term: { dimensionValues: from } },
        { term: { path: from } },
        { term: { clusterId: from } },
        { wildcard: { "provenance.key": { value: `*${from}*` } } },
      ],
      minimum_should_match: 1,
    },
  };
  let moved = 0;
  const sorted: [string, string][] = [
    [store.indices.knowledge, "id"],
    [store.indices.chunks, "id"],
    [indices.archive, "hash"],
  ];
  for (const [index, sortField] of sorted) {
    // A page at a time: a document rewritten here names the new hash, behind the search's position.
    for await (const hits of scanFields<unknown>(store, index, naming, undefined, sortField)) {
      const lines: unknown[] = [];
      for (const hit of hits) {
        const json = JSON.stringify(hit._source).replaceAll(from, to);
        lines.push({ index: { _index: index, _id: hit._id } }, JSON.parse(json) as unknown);
      }
      await bulk(store, lines, { refresh: "true", timeoutMs: 120_000 });
      moved += lines.length / 2;
    }
  }
  return moved;
}

/** Of these dimension values, those no stored object or chunk carries (leaving out `exceptOwner`'s). */
export async function unusedDimensionValues(
  store: CortexStore,
  values: ReadonlySet<string>,
  exceptOwner?: string,
): Promise<Set<string>> {
  const unused = new Set(values);
  const all = [...values];
  for (let start = 0; start < all.length; start += page) {
    const batch = all.slice(start, start + page);
    const { body } = await request<{ aggregations: { used: { buckets: { key: string }[] } } }>(
      store,
      "POST",
      `/${store.indices.knowledge},${store.indices.chunks}/_search`,
      {
        size: 0,
        query: {
          bool: {
            filter: [{ terms: { dimensionValues: batch } }],
            ...(exceptOwner !== undefined && { must_not: [{ term: { "owner.userId": exceptOwner } }] }),
          },
        },
        aggs: { used: { terms: { field: "dimensionValues", include: batch, size: batch.length } } },
      },
    );
    for (const bucket of body.aggregations.used.buckets) unused.delete(bucket.key);
  }
  return unused;
}

/** The candidate-dimension samples lose these values (ones no stored item uses); returns how many went. */
export async function pruneDimensionValues(store: CortexStore, values: ReadonlySet<string>): Promise<number> {
  if (values.size === 0) return 0;
  let removed = 0;
  const candidates = scanFields<{ sampleValues?: string[] }>(
    store,
    store.indices.dimensions,
    { term: { kind: "candidate" } },
    ["name", "sampleValues"],
    "name",
  );
  for await (const hits of candidates) {
    const lines: unknown[] = [];
    for (const hit of hits) {
      const samples = hit._source.sampleValues ?? [];
      const kept = samples.filter((value) => !values.has(value));
      if (kept.length === samples.length) continue;
      removed += samples.length - kept.length;
      lines.push(
        { update: { _index: store.indices.dimensions, _id: hit._id } },
        { doc: { sampleValues: kept } },
      );
    }
    if (lines.length > 0) await bulk(store, lines, { refresh: "true", timeoutMs: 60_000 });
  }
  return removed;
}

/**
 * Flush (the translog's copies of deleted documents go) and merge deleted documents out of the segments, so erased
 * _source bytes leave the disk, not only the search results. A soft-deleted document stays in its segment while the
 * shard's retention lease still covers it (the lease is synced every 30 s), so the caller asks again after that.
 * Best effort: false when OpenSearch did not finish in time.
 */
export async function expungeDeleted(store: CortexStore, indices: readonly string[]): Promise<boolean> {
  const targets = `/${indices.join(",")}`;
  try {
    // Any segment holding a deleted document is rewritten, not only those past the default 10 % of deletes.
    const allowed = { index: { merge: { policy: { expunge_deletes_allowed: 0 } } } };
    await request(store, "PUT", `${targets}/_settings?ignore_unavailable=true`, allowed, {
      timeoutMs: 60_000,
    });
    await request(store, "POST", `${targets}/_flush?ignore_unavailable=true`, undefined, {
      timeoutMs: 60_000,
    });
    await request(
      store,
      "POST",
      `${targets}/_forcemerge?only_expunge_deletes=true&ignore_unavailable=true`,
      undefined,
      { timeoutMs: 120_000 },
    );
    // The searcher still holds the merged-away files until a refresh, which a search-idle shard does not do itself.
    await request(store, "POST", `${targets}/_refresh?ignore_unavailable=true`, undefined, {
      timeoutMs: 60_000,
    });
    return true;
  } catch {
    return false;
  }
}
