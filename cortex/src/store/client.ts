/**
 * Cortex's connection to OpenSearch: the client, the one request helper everything else goes through, and the
 * error that says OpenSearch is unavailable. Thin on purpose: queries are built by pure functions in core/.
 */
import { Client } from "@opensearch-project/opensearch";
import { type IndexNames, indexNames } from "./templates.js";

export interface StoreOptions {
  url: string;
  /** Basic auth for an external cluster; the appliance's own OpenSearch needs none. */
  credentials?: { username: string; password: string };
  /** PEM CA bundle an external cluster's certificate chains to (otherwise the system's trust store). */
  ca?: string;
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
  override readonly name: string = "StoreUnavailableError";
}

/**
 * OpenSearch's disk passed its flood-stage watermark: it blocks writes to every index on that node
 * (read-only-allow-delete) until space is freed, then lifts the block itself. Still unavailable (a retry later
 * succeeds), but routes say why with 507, as for a full volume of Cortex's own.
 */
export class StoreFullError extends StoreUnavailableError {
  override readonly name = "StoreFullError";
}

/** The words of OpenSearch's flood-stage block (ClusterBlock 12), in an error's reason. */
export function floodStageBlock(reason: string | undefined): boolean {
  return reason !== undefined && /flood-stage watermark|read-only-allow-delete block/.test(reason);
}

/**
 * The words of an index's own write block (`index.blocks.write`, ClusterBlock 8), which a knowledge index rebuild
 * puts on the index it copies: the write is refused for now, not for good.
 */
export function indexWriteBlock(reason: string | undefined): boolean {
  return reason !== undefined && /index write \(api\)/.test(reason);
}

/**
 * Raised when OpenSearch refuses a value it was given to store (a date it cannot parse, a term too long to
 * index): the request's input, not Cortex or OpenSearch, is at fault, so routes answer 400, never 500.
 */
export class StoreRejectedError extends Error {
  override readonly name = "StoreRejectedError";
}

/**
 * OpenSearch's error types for a stored value it cannot take (a date it cannot parse, a number out of range, a
 * term too long to index). Only a document write's refusal means that: a search, mapping or script Cortex built
 * that OpenSearch refuses (illegal_argument_exception, parse_exception, ...) is Cortex's bug and stays a 500.
 */
const valueRejections = new Set([
  "mapper_parsing_exception",
  "document_parsing_exception",
  "max_bytes_length_exceeded_exception",
]);

/** An immense term is refused as a plain illegal argument (caused by max_bytes_length_exceeded_exception). */
const immenseTerm = /^Document contains at least one immense term/;

/**
 * Whether a document write's (or bulk item's) 400 refuses the values it was sent, as opposed to a request Cortex
 * built wrong. Only for writes of documents: callers pass a write's error, never a search's.
 */
export function rejectsInput(
  status: number | null | undefined,
  type: string | undefined,
  reason?: string,
): boolean {
  if (status !== 400 || type === undefined) return false;
  return (
    valueRejections.has(type) ||
    (type === "illegal_argument_exception" && reason !== undefined && immenseTerm.test(reason))
  );
}

/** A single-document write (index, create, update by id): the only requests whose 400 can be the values'. */
export function writesDocument(method: string, path: string): boolean {
  return (method === "PUT" || method === "POST") && /^\/[^/?]+\/_(?:doc|create|update)\//.test(path);
}

export function createStore(options: StoreOptions): CortexStore {
  const client = new Client({
    node: options.url,
    maxRetries: 1,
    requestTimeout: 10_000,
    ...(options.credentials ? { auth: options.credentials } : {}),
    ...(options.ca ? { ssl: { ca: options.ca } } : {}),
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
    if (status === 429 && floodStageBlock(reason)) throw new StoreFullError(reason);
    if (status === null || status === 429 || status >= 500) throw new StoreUnavailableError(reason);
    if (status === 403 && indexWriteBlock(reason)) throw new StoreUnavailableError(reason);
    const cause = rootCause(error);
    if (writesDocument(method, path) && rejectsInput(status, cause?.type, cause?.reason)) {
      throw new StoreRejectedError(reason);
    }
    throw new Error(`OpenSearch ${method} ${path}: ${reason}`);
  }
}

interface OpenSearchErrorBody {
  type?: string;
  reason?: string;
  root_cause?: { type?: string; reason?: string }[];
}

/** The root cause (the outer error can be a generic wrapper), else the error itself. */
function rootCause(error: unknown): { type?: string; reason?: string } | undefined {
  const body = (error as { meta?: { body?: { error?: OpenSearchErrorBody } } }).meta?.body?.error;
  return body?.root_cause?.[0] ?? body;
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
