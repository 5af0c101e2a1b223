import { readFileSync } from "node:fs";
import { routes } from "@remram/contract";
import type { PluginConfig } from "./config.js";
import {
  type ExplicitSaveAnswer,
  type ExplicitSaveBody,
  ExplicitSaveResponseSchema,
  IngestResponseSchema,
  ingestBody,
  type ReflectBody,
  type RetrieveRequest,
  type RetrieveResponse,
  RetrieveResponseSchema,
  type ToolResultEvent,
} from "./cortex-contract.js";
import {
  type ArchiveRecallAnswer,
  ArchiveRecallAnswerSchema,
  type ArchiveSearchAnswer,
  ArchiveSearchAnswerSchema,
  type ArchiveSearchBody,
  type TranscriptBody,
} from "./memory-tools-contract.js";
import type { ReflectRequest } from "./reflection.js";

/**
 * Thin HTTP client for Cortex. Every call has a hard deadline through AbortSignal.timeout, so a hanging
 * Cortex costs at most that long; failures come back as values, never as exceptions into a hook.
 */

export type CortexFailure =
  | { kind: "timeout" }
  | { kind: "unreachable"; message: string }
  | { kind: "http"; status: number; body: string }
  | { kind: "invalid_response"; message: string };

export type CortexResult<T> = { ok: true; value: T } | { ok: false; failure: CortexFailure };

export function describeFailure(failure: CortexFailure): string {
  switch (failure.kind) {
    case "timeout":
      return "timed out";
    case "unreachable":
      return `unreachable: ${failure.message}`;
    case "http":
      return `HTTP ${failure.status}: ${failure.body.slice(0, 200)}`;
    case "invalid_response":
      return `invalid response: ${failure.message}`;
  }
}

export interface CortexClient {
  retrieve(request: RetrieveRequest): Promise<CortexResult<RetrieveResponse>>;
  ingest(events: readonly ToolResultEvent[]): Promise<CortexResult<{ acknowledged: string[] }>>;
  reflect(body: ReflectRequest): Promise<CortexResult<unknown>>;
  /** A finished session's transcript into the archive and retrieval (POST /archive/transcripts). */
  archiveTranscript(body: TranscriptBody, timeoutMs: number): Promise<CortexResult<unknown>>;
  /** Archived summaries, never documents (POST /archive/search): memory_search. */
  archiveSearch(body: ArchiveSearchBody, timeoutMs: number): Promise<CortexResult<ArchiveSearchAnswer>>;
  /** One archived document, when consent allows (GET /archive/{hash}): memory_get. */
  archiveRecall(
    hash: string,
    principal: { userId: string; householdId?: string; agentId: string },
    timeoutMs: number,
  ): Promise<CortexResult<ArchiveRecallAnswer>>;
  /** An explicit save (POST /remember) within `timeoutMs`: the run waits for it, briefly. */
  remember(body: ExplicitSaveBody, timeoutMs: number): Promise<CortexResult<ExplicitSaveAnswer>>;
}

/**
 * How often the token file is read again. A rotated Secret reaches the file at a kubelet sync; presenting the new
 * value soon ends Cortex's overlap window for the old one, which otherwise lasts until a 401.
 */
const tokenRereadMs = 30_000;

export function createCortexClient(
  config: PluginConfig["cortex"],
  fetchImpl: typeof fetch = fetch,
  now: () => number = Date.now,
): CortexClient {
  const baseUrl = config.url.replace(/\/+$/, "");
  let token: string | undefined;
  let tokenReadAt = 0;
  const readToken = (): string | undefined => {
    if (config.tokenFile === undefined) return undefined;
    tokenReadAt = now();
    try {
      return readFileSync(config.tokenFile, "utf8").trim();
    } catch {
      return undefined;
    }
  };

  const post = (path: string, body: unknown, timeoutMs: number) => call("POST", path, body, timeoutMs);

  /** A GET carries no body; everything else (token, deadline, failures as values) is the same as a POST. */
  async function call(
    method: "GET" | "POST",
    path: string,
    body: unknown,
    timeoutMs: number,
  ): Promise<CortexResult<unknown>> {
    const started = Date.now();
    for (let attempt = 0; attempt < 2; attempt += 1) {
      if (token === undefined || now() - tokenReadAt >= tokenRereadMs) token = readToken();
      const remaining = timeoutMs - (Date.now() - started);
      if (remaining <= 0) return { ok: false, failure: { kind: "timeout" } };
      let response: Response;
      let text: string;
      try {
        response = await fetchImpl(`${baseUrl}${path}`, {
          method,
          headers: {
            ...(method === "POST" ? { "content-type": "application/json" } : {}),
            ...(token === undefined ? {} : { authorization: `Bearer ${token}` }),
          },
          ...(method === "POST" ? { body: JSON.stringify(body) } : {}),
          signal: AbortSignal.timeout(remaining),
        });
        text = await response.text();
      } catch (error) {
        const name = error instanceof Error ? error.name : "";
        if (name === "TimeoutError" || name === "AbortError")
          return { ok: false, failure: { kind: "timeout" } };
        const cause =
          error instanceof Error && error.cause instanceof Error ? `: ${error.cause.message}` : "";
        return {
          ok: false,
          failure: {
            kind: "unreachable",
            message: `${error instanceof Error ? error.message : String(error)}${cause}`,
          },
        };
      }
      // A rotated Secret: read the token file again once.
      if (response.status === 401 && attempt === 0 && config.tokenFile !== undefined) {
        token = undefined;
        continue;
      }
      if (!response.ok) return { ok: false, failure: { kind: "http", status: response.status, body: text } };
      try {
        return { ok: true, value: text === "" ? {} : JSON.parse(text) };
      } catch (error) {
        return { ok: false, failure: { kind: "invalid_response", message: String(error) } };
      }
    }
    return { ok: false, failure: { kind: "http", status: 401, body: "unauthorized" } };
  }

  return {
    async retrieve(request) {
      const result = await post(routes.retrieve.url, request, config.retrieveTimeoutMs);
      if (!result.ok) return result;
      const parsed = RetrieveResponseSchema.safeParse(result.value);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, failure: { kind: "invalid_response", message: parsed.error.message.slice(0, 300) } };
    },
    async ingest(events) {
      const result = await post(routes.ingest.url, ingestBody(events), config.ingestTimeoutMs);
      if (!result.ok) return result;
      const parsed = IngestResponseSchema.safeParse(result.value);
      if (!parsed.success) {
        return {
          ok: false,
          failure: { kind: "invalid_response", message: parsed.error.message.slice(0, 300) },
        };
      }
      // A 2xx for the batch acknowledges every item (duplicates included: Cortex already holds them).
      return { ok: true, value: { acknowledged: events.map((event) => event.provenanceKey) } };
    },
    async remember(body, timeoutMs) {
      const result = await post(routes.remember.url, body, timeoutMs);
      if (!result.ok) return result;
      const parsed = ExplicitSaveResponseSchema.safeParse(result.value);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, failure: { kind: "invalid_response", message: parsed.error.message.slice(0, 300) } };
    },
    archiveTranscript(body, timeoutMs) {
      return post(routes.archiveTranscript.url, body, timeoutMs);
    },
    async archiveSearch(body, timeoutMs) {
      const result = await post(routes.archiveSearch.url, body, timeoutMs);
      if (!result.ok) return result;
      const parsed = ArchiveSearchAnswerSchema.safeParse(result.value);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, failure: { kind: "invalid_response", message: parsed.error.message.slice(0, 300) } };
    },
    async archiveRecall(hash, principal, timeoutMs) {
      const query = new URLSearchParams({
        userId: principal.userId,
        agentId: principal.agentId,
        ...(principal.householdId === undefined ? {} : { householdId: principal.householdId }),
      });
      const path = `${routes.archiveRecall.url.replace(":hash", encodeURIComponent(hash))}?${query}`;
      const result = await call("GET", path, undefined, timeoutMs);
      if (!result.ok) return result;
      const parsed = ArchiveRecallAnswerSchema.safeParse(result.value);
      return parsed.success
        ? { ok: true, value: parsed.data }
        : { ok: false, failure: { kind: "invalid_response", message: parsed.error.message.slice(0, 300) } };
    },
    reflect(request) {
      // /reflect takes the delta's fields with the principal beside them.
      const body: ReflectBody = { ...request.delta, principal: request.principal };
      return post(routes.reflect.url, body, config.reflectTimeoutMs);
    },
  };
}
