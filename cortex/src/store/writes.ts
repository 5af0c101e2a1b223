/** Writing documents: bulk requests, durable idempotent creates, and a single document replaced by id. */
import { type CortexStore, request, StoreUnavailableError } from "./client.js";

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

/** Write a document by id (replacing it) and wait until it is searchable. */
export async function putDocument(
  store: CortexStore,
  index: string,
  id: string,
  document: unknown,
): Promise<void> {
  await request(store, "PUT", `/${index}/_doc/${encodeURIComponent(id)}?refresh=wait_for`, document);
}
