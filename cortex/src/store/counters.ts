/**
 * The counts Cortex keeps in OpenSearch: retrieval usage per object, occurrences of candidate dimensions (dream
 * decides when one becomes canonical), and knowledge objects by type and status for the object gauge.
 */
import { type CortexStore, request } from "./client.js";
import type { SearchResult } from "./reads.js";
import { bulk } from "./writes.js";

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
