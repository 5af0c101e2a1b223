/**
 * The OpenSearch side of Cortex: index set-up, durable idempotent writes, one-round-trip multi-search, usage
 * counters and the dimension registry. Thin on purpose: queries are built by pure functions in core/.
 * Reflection and dream use the same functions (and the stable aliases from templates.ts).
 */
import { Client } from "@opensearch-project/opensearch";
import { dimensionTags } from "../core/ingest-plan.js";
import type { Chunk, KnowledgeObject } from "../schemas/knowledge.js";
import {
  chunkTemplate,
  concreteIndex,
  dimensionsTemplate,
  type IndexNames,
  indexNames,
  knowledgeTemplate,
  templateVersion,
  vectorsTemplate,
} from "./templates.js";

export interface StoreOptions {
  url: string;
  /** Basic auth for an external cluster; the appliance's own OpenSearch needs none. */
  credentials?: { username: string; password: string };
  indexPrefix: string;
  embedDimensions: number;
}

export interface CortexStore {
  client: Client;
  indices: IndexNames;
  embedDimensions: number;
}

/** Raised when OpenSearch cannot be reached or refuses work it should accept; routes map it to 503. */
export class StoreUnavailableError extends Error {
  override readonly name = "StoreUnavailableError";
}

export function createStore(options: StoreOptions): CortexStore {
  const client = new Client({
    node: options.url,
    maxRetries: 1,
    requestTimeout: 10_000,
    ...(options.credentials ? { auth: options.credentials } : {}),
  });
  return { client, indices: indexNames(options.indexPrefix), embedDimensions: options.embedDimensions };
}

export interface RequestOptions {
  timeoutMs?: number;
  retries?: number;
}

/** One HTTP call through the client's connection pool; the body is ours to shape (no generated request types). */
export async function request<T>(
  store: CortexStore,
  method: "GET" | "PUT" | "POST" | "DELETE" | "HEAD",
  path: string,
  body?: unknown,
  options: RequestOptions & { ndjson?: boolean; ignore?: number[] } = {},
): Promise<{ statusCode: number; body: T }> {
  try {
    const response = await store.client.transport.request(
      {
        method,
        path,
        ...(body !== undefined &&
          (options.ndjson
            ? { bulkBody: body as Record<string, unknown>[] }
            : { body: body as Record<string, unknown> })),
      },
      {
        ...(options.timeoutMs !== undefined && { requestTimeout: options.timeoutMs }),
        maxRetries: options.retries ?? 0,
        ...(options.ignore !== undefined && { ignore: options.ignore }),
      },
    );
    return { statusCode: response.statusCode ?? 0, body: response.body as T };
  } catch (error) {
    // No status at all (connection refused, timeout) means unreachable, like 429 and 5xx.
    const status = (error as { meta?: { statusCode?: number | null } }).meta?.statusCode ?? null;
    const reason = describeError(error);
    if (status === null || status === 429 || status >= 500) throw new StoreUnavailableError(reason);
    throw new Error(`OpenSearch ${method} ${path}: ${reason}`);
  }
}

interface OpenSearchErrorBody {
  type?: string;
  reason?: string;
  root_cause?: { type?: string; reason?: string }[];
}

function describeError(error: unknown): string {
  const meta = (error as { meta?: { body?: { error?: OpenSearchErrorBody } } }).meta;
  const body = meta?.body?.error;
  if (body?.reason !== undefined) {
    // "all shards failed" says nothing; the first root cause says why.
    const cause = body.root_cause?.[0];
    const detail = cause?.reason !== undefined && cause.reason !== body.reason ? ` (${cause.reason})` : "";
    return `${body.type ?? "error"}: ${body.reason}${detail}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Put the versioned templates and create any missing index (the alias comes from the template). An index built
 * from an older template version gets the new template's mappings added in place.
 */
export async function ensureIndices(store: CortexStore): Promise<void> {
  const { indices, embedDimensions } = store;
  const templates: [string, unknown][] = [
    [indices.knowledge, knowledgeTemplate(indices.knowledge)],
    [indices.vectors, vectorsTemplate(indices.vectors, embedDimensions)],
    [indices.chunks, chunkTemplate(indices.chunks, embedDimensions)],
    [indices.dimensions, dimensionsTemplate(indices.dimensions)],
  ];
  for (const [alias, template] of templates) {
    await request(store, "PUT", `/_index_template/${alias}`, template, { retries: 2 });
    const existing = await request<Record<string, { mappings?: { _meta?: { templateVersion?: number } } }>>(
      store,
      "GET",
      `/${alias}/_mapping`,
      undefined,
      { ignore: [404] },
    );
    if (existing.statusCode === 404) {
      await request(store, "PUT", `/${concreteIndex(alias)}`, undefined, { ignore: [400], retries: 2 });
      continue;
    }
    for (const [index, mapping] of Object.entries(existing.body)) {
      if ((mapping.mappings?._meta?.templateVersion ?? 0) < templateVersion) {
        const mappings = (template as { template: { mappings: unknown } }).template.mappings;
        await request(store, "PUT", `/${index}/_mapping`, mappings);
      }
    }
  }
  await request(
    store,
    "GET",
    `/_cluster/health/${indices.knowledge},${indices.vectors},${indices.chunks}?wait_for_status=green&timeout=30s`,
  );
}

/** The schema object plus the flattened dimension fields filters and facets use. */
function withDimensionFields<T extends KnowledgeObject | Chunk>(
  item: T,
): T & { dimensionTags: string[]; dimensionValues: string[] } {
  const tags = dimensionTags(item.dimensions);
  return {
    ...item,
    dimensionTags: tags,
    dimensionValues: [...new Set(tags.map((tag) => tag.slice(tag.indexOf(":") + 1)))].sort(),
  };
}

/** A stored knowledge object; its vector is a document of its own in the vectors index. */
export function knowledgeDocument(
  object: KnowledgeObject,
): ReturnType<typeof withDimensionFields<KnowledgeObject>> {
  return withDimensionFields(object);
}

/** A stored chunk, with its embedding (chunks are written once and rarely updated). */
export function chunkDocument(
  chunk: Chunk,
  embedding: readonly number[] | null,
  embeddingModel: string | null,
): ReturnType<typeof withDimensionFields<Chunk>> & {
  embedding?: readonly number[];
  embeddingModel: string | null;
} {
  return {
    ...withDimensionFields(chunk),
    ...(embedding !== null && { embedding }),
    embeddingModel: embedding === null ? null : embeddingModel,
  };
}

/** The fields of a knowledge object the k-NN gate filters on (everything in the gate but confidence). */
export function vectorGateFields(object: KnowledgeObject) {
  return {
    id: object.id,
    type: object.type,
    status: object.status,
    scope: object.scope,
    owner: object.owner,
    privacy: object.privacy,
    consent: object.consent,
    validity: object.validity,
    dimensionTags: dimensionTags(object.dimensions),
  };
}

/** Whether an update changes what the k-NN gate sees, so the vector document must be rewritten too. */
export function gateChanged(before: KnowledgeObject, after: KnowledgeObject): boolean {
  return JSON.stringify(vectorGateFields(before)) !== JSON.stringify(vectorGateFields(after));
}

export function vectorDocument(
  object: KnowledgeObject,
  embedding: readonly number[],
  embeddingModel: string | null,
) {
  return { ...vectorGateFields(object), embedding, embeddingModel };
}

/**
 * Bulk lines writing a knowledge object and, when it has one, its vector. `create` never overwrites an existing
 * id (ingest's idempotency); `index` replaces.
 */
export function knowledgeWriteLines(
  indices: Pick<IndexNames, "knowledge" | "vectors">,
  op: "create" | "index",
  object: KnowledgeObject,
  embedding: readonly number[] | null,
  embeddingModel: string | null,
): unknown[] {
  const lines: unknown[] = [
    { [op]: { _index: indices.knowledge, _id: object.id } },
    knowledgeDocument(object),
  ];
  if (embedding !== null) {
    lines.push(
      { [op]: { _index: indices.vectors, _id: object.id } },
      vectorDocument(object, embedding, embeddingModel),
    );
  }
  return lines;
}

export interface BulkItemResult {
  _id: string;
  status: number;
  error?: { type: string; reason: string };
}

/** One bulk request; each item's result in request order. Which item failures matter is the caller's call. */
export async function bulk(
  store: CortexStore,
  lines: readonly unknown[],
  options: { refresh?: "true" | "wait_for"; timeoutMs: number },
): Promise<BulkItemResult[]> {
  const refresh = options.refresh === undefined ? "" : `?refresh=${options.refresh}`;
  const { body } = await request<{ items: Record<string, BulkItemResult>[] }>(
    store,
    "POST",
    `/_bulk${refresh}`,
    lines,
    { ndjson: true, timeoutMs: options.timeoutMs },
  );
  return body.items.map((item) => Object.values(item)[0] as BulkItemResult);
}

export type WriteOutcome = "created" | "duplicate";

/**
 * Create documents by id; an existing id is a duplicate, never overwritten. Returns each document's outcome in
 * input order once the writes are durable (translog fsync per request, OpenSearch's default) and visible to
 * search (refresh=wait_for).
 */
export async function createDocuments(
  store: CortexStore,
  documents: readonly { index: string; id: string; document: unknown }[],
): Promise<WriteOutcome[]> {
  if (documents.length === 0) return [];
  const lines: unknown[] = [];
  for (const { index, id, document } of documents)
    lines.push({ create: { _index: index, _id: id } }, document);
  const results = await bulk(store, lines, { refresh: "wait_for", timeoutMs: 60_000 });
  const outcomes: WriteOutcome[] = [];
  const failures: string[] = [];
  let retryable = false;
  for (const result of results) {
    if (result.status === 201) outcomes.push("created");
    else if (result.status === 409) outcomes.push("duplicate");
    else {
      retryable ||= result.status === 429 || result.status >= 500;
      failures.push(
        `${result._id}: ${result.status} ${result.error?.type ?? ""} ${result.error?.reason ?? ""}`,
      );
    }
  }
  if (failures.length > 0) {
    const message = `bulk create failed for ${failures.length} document(s): ${failures.slice(0, 3).join("; ")}`;
    throw retryable ? new StoreUnavailableError(message) : new Error(message);
  }
  return outcomes;
}

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
  options: { pageSize?: number } = {},
): AsyncGenerator<SearchHit<S>[]> {
  const keepAlive = "2m";
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

/** Add retrieval counts; retried on version conflicts, never blocks a request (called from the usage flusher). */
export async function incrementUsage(
  store: CortexStore,
  counts: ReadonlyMap<string, { index: string; count: number }>,
  at: string,
): Promise<void> {
  if (counts.size === 0) return;
  const lines: unknown[] = [];
  for (const [id, { index, count }] of [...counts].sort(([a], [b]) => (a < b ? -1 : 1))) {
    lines.push(
      { update: { _index: index, _id: id, retry_on_conflict: 3 } },
      {
        script: {
          lang: "painless",
          source:
            "ctx._source.usageCount = (ctx._source.usageCount == null ? 0 : ctx._source.usageCount) + params.n; ctx._source.lastUsedAt = params.at;",
          params: { n: count, at },
        },
      },
    );
  }
  await bulk(store, lines, { timeoutMs: 10_000 });
}

/** Whether OpenSearch answers and the cluster is usable. */
export async function pingStore(store: CortexStore, timeoutMs: number): Promise<boolean> {
  try {
    const { body } = await request<{ status: string }>(store, "GET", "/_cluster/health", undefined, {
      timeoutMs,
    });
    return body.status === "green" || body.status === "yellow";
  } catch {
    return false;
  }
}

export async function indicesExist(store: CortexStore, timeoutMs: number): Promise<boolean> {
  try {
    const { statusCode } = await request(
      store,
      "HEAD",
      `/${store.indices.knowledge},${store.indices.vectors},${store.indices.chunks},${store.indices.dimensions}`,
      undefined,
      { timeoutMs, ignore: [404] },
    );
    return statusCode === 200;
  } catch {
    return false;
  }
}

/** Counts of knowledge objects by type and status, for the object gauge. */
export async function countObjectsByTypeAndStatus(
  store: CortexStore,
  timeoutMs: number,
): Promise<{ type: string; status: string; count: number }[]> {
  interface Bucket {
    key: string;
    doc_count: number;
  }
  const { body } = await request<{
    aggregations: { types: { buckets: (Bucket & { statuses: { buckets: Bucket[] } })[] } };
  }>(
    store,
    "POST",
    `/${store.indices.knowledge}/_search`,
    {
      size: 0,
      aggs: {
        types: {
          terms: { field: "type", size: 10 },
          aggs: { statuses: { terms: { field: "status", size: 10 } } },
        },
      },
    },
    { timeoutMs },
  );
  return body.aggregations.types.buckets.flatMap((type) =>
    type.statuses.buckets.map((status) => ({ type: type.key, status: status.key, count: status.doc_count })),
  );
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

/** Write a document by id (replacing it) and wait until it is searchable. */
export async function putDocument(
  store: CortexStore,
  index: string,
  id: string,
  document: unknown,
): Promise<void> {
  await request(store, "PUT", `/${index}/_doc/${encodeURIComponent(id)}?refresh=wait_for`, document);
}

/** Count dimension names that are not canonical yet; dream decides when a candidate becomes canonical. */
export async function recordCandidateDimensions(
  store: CortexStore,
  observations: ReadonlyMap<string, { occurrences: number; values: readonly string[] }>,
  at: string,
): Promise<void> {
  if (observations.size === 0) return;
  const lines: unknown[] = [];
  for (const [name, { occurrences, values }] of [...observations].sort(([a], [b]) => (a < b ? -1 : 1))) {
    const sample = [...new Set(values)].sort().slice(0, 10);
    lines.push(
      { update: { _index: store.indices.dimensions, _id: `candidate:${name}`, retry_on_conflict: 5 } },
      {
        script: {
          lang: "painless",
          source:
            "ctx._source.occurrences += params.n; ctx._source.lastSeenAt = params.at; for (v in params.values) { if (ctx._source.sampleValues.size() < 10 && !ctx._source.sampleValues.contains(v)) { ctx._source.sampleValues.add(v); } }",
          params: { n: occurrences, at, values: sample },
        },
        upsert: {
          kind: "candidate",
          name,
          occurrences,
          sampleValues: sample,
          firstSeenAt: at,
          lastSeenAt: at,
        },
      },
    );
  }
  await bulk(store, lines, { timeoutMs: 10_000 });
}

/** The most frequent candidate dimensions. */
export async function listCandidateDimensions<S>(store: CortexStore, limit: number): Promise<S[]> {
  const { body } = await request<SearchResult<S>>(store, "POST", `/${store.indices.dimensions}/_search`, {
    size: limit,
    query: { term: { kind: "candidate" } },
    sort: [{ occurrences: "desc" }, { name: "asc" }],
  });
  return body.hits.hits.map((hit) => hit._source);
}
