/**
 * Reading documents back: one by id, several by id through a filter, several searches in one round trip, or
 * every match from one consistent snapshot.
 */
import { type CortexStore, request } from "./client.js";

export interface SearchHit<S> {
  _id: string;
  _score: number | null;
  _source: S;
  /** With `seq_no_primary_term: true`: the version an optimistic write can be made conditional on. */
  _seq_no?: number;
  _primary_term?: number;
}

export interface SearchResult<S> {
  hits: { hits: SearchHit<S>[] };
  error?: { type: string; reason: string };
  status?: number;
}

/** A single document by id, or undefined. */
export async function getDocument<S>(store: CortexStore, index: string, id: string): Promise<S | undefined> {
  const { statusCode, body } = await request<{ found: boolean; _source: S }>(
    store,
    "GET",
    `/${index}/_doc/${encodeURIComponent(id)}`,
    undefined,
    { ignore: [404] },
  );
  return statusCode === 404 || !body.found ? undefined : body._source;
}

/** Several searches in one round trip; each entry is an index and a search body. */
export async function multiSearch<S>(
  store: CortexStore,
  searches: readonly { index: string; body: unknown }[],
  timeoutMs: number,
): Promise<SearchResult<S>[]> {
  if (searches.length === 0) return [];
  const lines: unknown[] = [];
  for (const search of searches) lines.push({ index: search.index }, search.body);
  const { body } = await request<{ responses: SearchResult<S>[] }>(store, "POST", "/_msearch", lines, {
    ndjson: true,
    timeoutMs,
  });
  return body.responses;
}

/**
 * Every document of `index` matching `query`, a page at a time, from one consistent snapshot (a scroll in index
 * order: on 100k knowledge objects 1.4 s, against 2.7 s paging by id with search_after). Hits carry their
 * sequence number and primary term, so a later write can be made conditional on what was read. Stopping early
 * releases the snapshot.
 */
export async function* scanDocuments<S>(
  store: CortexStore,
  index: string,
  query: unknown,
  /** keepAlive: how long the snapshot waits between pages (a backup opens several before it reads them). */
  options: { pageSize?: number; keepAlive?: string } = {},
): AsyncGenerator<SearchHit<S>[]> {
  const keepAlive = options.keepAlive ?? "2m";
  type Page = { _scroll_id?: string; hits: { hits: SearchHit<S>[] } };
  let { body } = await request<Page>(
    store,
    "POST",
    `/${index}/_search?scroll=${keepAlive}`,
    { size: options.pageSize ?? 5000, query, sort: ["_doc"], seq_no_primary_term: true },
    { timeoutMs: 60_000 },
  );
  try {
    while (body.hits.hits.length > 0) {
      yield body.hits.hits;
      if (body._scroll_id === undefined) return;
      ({ body } = await request<Page>(
        store,
        "POST",
        "/_search/scroll",
        { scroll: keepAlive, scroll_id: body._scroll_id },
        { timeoutMs: 60_000 },
      ));
    }
  } finally {
    if (body._scroll_id !== undefined) {
      await request(
        store,
        "DELETE",
        "/_search/scroll",
        { scroll_id: body._scroll_id },
        { ignore: [404] },
      ).catch(() => undefined);
    }
  }
}

/** Fetch documents by id from one index through a filter (the policy gate), so nothing ungated leaks in. */
export async function searchByIds<S>(
  store: CortexStore,
  index: string,
  ids: readonly string[],
  filter: readonly unknown[],
  sourceExcludes: readonly string[],
  timeoutMs: number,
): Promise<SearchHit<S>[]> {
  if (ids.length === 0) return [];
  const { body } = await request<SearchResult<S>>(
    store,
    "POST",
    `/${index}/_search`,
    {
      size: ids.length,
      query: { bool: { filter: [{ ids: { values: ids } }, ...filter] } },
      _source: { excludes: sourceExcludes },
      sort: [{ id: "asc" }],
    },
    { timeoutMs },
  );
  return body.hits.hits;
}
