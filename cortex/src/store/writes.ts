/** Writing documents: bulk requests, durable idempotent creates, and a single document replaced by id. */
import {
  type CortexStore,
  floodStageBlock,
  rejectsInput,
  request,
  StoreFullError,
  StoreRejectedError,
  StoreUnavailableError,
} from "./client.js";

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

/**
 * The error for failed bulk items: unavailable when a retry may succeed, rejected (HTTP 400) when OpenSearch
 * refused every one for the data it was given, else a plain error (500).
 */
export function bulkFailure(message: string, failed: readonly BulkItemResult[]): Error {
  const blocked = failed.find((result) => result.status === 429 && floodStageBlock(result.error?.reason));
  if (blocked !== undefined) return new StoreFullError(`${message}: ${blocked.error?.reason}`);
  if (failed.some((result) => result.status === 429 || result.status >= 500)) {
    return new StoreUnavailableError(message);
  }
  if (
    failed.length > 0 &&
    failed.every((result) => rejectsInput(result.status, result.error?.type, result.error?.reason))
  ) {
    return new StoreRejectedError(message);
  }
  return new Error(message);
}

export type WriteOutcome = "created" | "duplicate";

/**
 * The most bytes of documents one bulk request carries. OpenSearch refuses a bulk whose bytes exceed its indexing
 * pressure limit (10% of the heap: 51 MiB with a 512 MiB heap) with 429 rejected_execution_exception, however
 * often it is retried; one maximal ingest request (16 MiB of text) becomes about 54 MiB of chunk documents.
 */
export const maxBulkBytes = 8 * 1024 * 1024;

/** Consecutive runs of `items` whose sizes add up to at most `maxBytes` each (an item larger alone is a run). */
export function byteBoundedBatches<T>(
  items: readonly T[],
  size: (item: T) => number,
  maxBytes: number,
): T[][] {
  const batches: T[][] = [];
  let current: T[] = [];
  let bytes = 0;
  for (const item of items) {
    const itemBytes = size(item);
    if (current.length > 0 && bytes + itemBytes > maxBytes) {
      batches.push(current);
      current = [];
      bytes = 0;
    }
    current.push(item);
    bytes += itemBytes;
  }
  if (current.length > 0) batches.push(current);
  return batches;
}

/**
 * Create documents by id; an existing id is a duplicate, never overwritten. Returns each document's outcome in
 * input order once the writes are durable (translog fsync per request, OpenSearch's default) and visible to
 * search (refresh=wait_for). Large sets go in several bulk requests of at most maxBulkBytes, each waiting for
 * its refresh; a failure leaves the earlier ones written, which a retry finds as duplicates.
 */
export async function createDocuments(
  store: CortexStore,
  documents: readonly { index: string; id: string; document: unknown }[],
): Promise<WriteOutcome[]> {
  if (documents.length === 0) return [];
  const sized = documents.map(({ index, id, document }) => {
    const lines = [{ create: { _index: index, _id: id } }, document];
    return { lines, bytes: Buffer.byteLength(JSON.stringify(document)) + index.length + id.length + 40 };
  });
  const results: BulkItemResult[] = [];
  for (const batch of byteBoundedBatches(sized, (item) => item.bytes, maxBulkBytes)) {
    const lines = batch.flatMap((item) => item.lines);
    results.push(...(await bulk(store, lines, { refresh: "wait_for", timeoutMs: 60_000 })));
  }
  const outcomes: WriteOutcome[] = [];
  const failed: BulkItemResult[] = [];
  for (const result of results) {
    if (result.status === 201) outcomes.push("created");
    else if (result.status === 409) outcomes.push("duplicate");
    else failed.push(result);
  }
  if (failed.length > 0) {
    const described = failed
      .slice(0, 3)
      .map(
        (result) =>
          `${result._id}: ${result.status} ${result.error?.type ?? ""} ${result.error?.reason ?? ""}`,
      );
    throw bulkFailure(`bulk create failed for ${failed.length} document(s): ${described.join("; ")}`, failed);
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
