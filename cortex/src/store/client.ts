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

/**
 * Raised when OpenSearch refuses a value it was given to store (a date it cannot parse, a term too long to
 * index): the request's input, not Cortex or OpenSearch, is at fault, so routes answer 400, never 500.
 */
export class StoreRejectedError extends Error {
  override readonly name = "StoreRejectedError";
}

/** OpenSearch's error types for a document or value it cannot take. */
const inputRejections = new Set([
  "mapper_parsing_exception",
  "document_parsing_exception",
  "illegal_argument_exception",
  "parse_exception",
  "x_content_parse_exception",
  "json_parse_exception",
  "max_bytes_length_exceeded_exception",
]);

/** Whether a 4xx from OpenSearch refuses the data it was sent (as opposed to a request Cortex built wrong). */
export function rejectsInput(status: number | null | undefined, type: string | undefined): boolean {
  return status === 400 && type !== undefined && inputRejections.has(type);
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
    if (rejectsInput(status, errorType(error))) throw new StoreRejectedError(reason);
    throw new Error(`OpenSearch ${method} ${path}: ${reason}`);
  }
}

interface OpenSearchErrorBody {
  type?: string;
  reason?: string;
  root_cause?: { type?: string; reason?: string }[];
}

/** The root cause's type (the outer one of a search can be a generic "search_phase_execution_exception"). */
function errorType(error: unknown): string | undefined {
  const body = (error as { meta?: { body?: { error?: OpenSearchErrorBody } } }).meta?.body?.error;
  return body?.root_cause?.[0]?.type ?? body?.type;
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
