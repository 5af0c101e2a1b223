/**
 * Cortex's HTTP errors, in one place: a route throws an HttpError (or a store error) and `errorHandler` writes the
 * one error body every caller parses, `{ statusCode, error, message, ...details }` (the schemas' errorResponse).
 */
import { STATUS_CODES } from "node:http";
import type { FastifyError, FastifyReply, FastifyRequest } from "fastify";
import { hasZodFastifySchemaValidationErrors } from "fastify-type-provider-zod";
import { StoreFullError, StoreRejectedError, StoreUnavailableError } from "./store/client.js";

/** How long a caller should wait before retrying a 503. */
const retryAfterSeconds = "5";

export class HttpError extends Error {
  constructor(
    readonly statusCode: number,
    message: string,
    /** Members the error body carries beside statusCode, error and message (e.g. a scope violation list). */
    readonly details: Record<string, unknown> = {},
    /** The body's `error`, when HTTP's name for the status says too little. */
    readonly title?: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}

export const badRequest = (message: string) => new HttpError(400, message);
export const forbidden = (message: string, details?: Record<string, unknown>) =>
  new HttpError(403, message, details);
export const notFound = (message: string) => new HttpError(404, message);
export const conflict = (message: string, details?: Record<string, unknown>) =>
  new HttpError(409, message, details);
/** A write an erasure refuses for good: the hooks drop a 4xx other than 401/403/408/429 instead of retrying it. */
export const gone = (message: string) => new HttpError(410, message);
export const payloadTooLarge = (message: string) => new HttpError(413, message);
export const serviceUnavailable = (message: string) => new HttpError(503, message);

/**
 * A volume Cortex writes files to (the archive, the workspace repository) is full: the errno of a file write, or
 * git's words for it. Nothing was acknowledged, so the caller keeps the data and retries once space is freed.
 */
export function volumeFull(error: Error): boolean {
  const code = (error as { code?: unknown }).code;
  return (
    code === "ENOSPC" ||
    code === "EDQUOT" ||
    /No space left on device|Disk quota exceeded/.test(error.message)
  );
}

/** The error body for `statusCode`, named as HTTP names it unless `error` says more. */
export function errorBody(statusCode: number, message: string, error = STATUS_CODES[statusCode] ?? "Error") {
  return { statusCode, error, message };
}

/**
 * The app's one error handler: validation → 400 naming the field, a value OpenSearch refuses → 400, OpenSearch
 * down → 503, a full volume or OpenSearch past its flood-stage watermark → 507, HttpError as thrown.
 */
export async function errorHandler(
  error: FastifyError | Error,
  request: FastifyRequest,
  reply: FastifyReply,
) {
  if (hasZodFastifySchemaValidationErrors(error)) {
    const details = error.validation.map(
      (issue) =>
        `${error.validationContext ?? "body"}${issue.instancePath.replaceAll("/", ".")}: ${issue.message}`,
    );
    return reply.code(400).send(errorBody(400, details.join("; ")));
  }
  if (error instanceof StoreFullError) {
    return refuseFull(
      request,
      reply,
      error,
      "opensearch",
      "OpenSearch's disk is full: the write was refused",
      `OpenSearch's disk is past its flood-stage watermark, so nothing was stored; free space on it and retry (OpenSearch lifts its write block by itself once it is below the high watermark): ${error.message.slice(0, 300)}`,
    );
  }
  if (error instanceof StoreUnavailableError) {
    request.log.warn({ err: error }, "OpenSearch unavailable");
    return reply
      .code(503)
      .header("Retry-After", retryAfterSeconds)
      .send(errorBody(503, `OpenSearch unavailable: ${error.message}`));
  }
  if (error instanceof StoreRejectedError) {
    // The client's input, so never a 5xx; not logged, since OpenSearch quotes the refused value.
    return reply.code(400).send(errorBody(400, `OpenSearch cannot store this input: ${error.message}`));
  }
  if (volumeFull(error)) {
    return refuseFull(
      request,
      reply,
      error,
      "volume",
      "a volume is full: the write was refused",
      `Cortex's volume is full, so nothing was stored; free space on it and retry (${error.message.slice(0, 200)})`,
    );
  }
  if (error instanceof HttpError) {
    if (error.statusCode === 503) reply.header("Retry-After", retryAfterSeconds);
    if (error.statusCode >= 500) request.log.error({ err: error }, "request failed");
    return reply
      .code(error.statusCode)
      .send({ ...errorBody(error.statusCode, error.message, error.title), ...error.details });
  }
  const statusCode = (error as { statusCode?: number }).statusCode ?? 500;
  if (statusCode >= 500) request.log.error({ err: error }, "request failed");
  return reply.code(statusCode).send(errorBody(statusCode, error.message));
}

/** The last write refused for want of space, kept for GET /admin/storage (and so the appliance's condition). */
export interface FullRefusal {
  at: Date;
  cause: "volume" | "opensearch";
  message: string;
}

/**
 * A write refused for want of space (Cortex's volume or OpenSearch's disk): logged, counted, remembered, 507 to
 * retry later.
 */
function refuseFull(
  request: FastifyRequest,
  reply: FastifyReply,
  error: Error,
  cause: FullRefusal["cause"],
  logMessage: string,
  message: string,
) {
  request.log.error({ err: error }, logMessage);
  const { cortex } = request.server;
  cortex.metrics.volumeFullRefusals.inc({ route: request.routeOptions.url ?? "" });
  cortex.fullRefusals.last = { at: cortex.clock(), cause, message: message.slice(0, 500) };
  return reply.code(507).header("Retry-After", retryAfterSeconds).send(errorBody(507, message));
}
