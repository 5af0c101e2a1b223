/**
 * The app's JSON API, typed. The session is an HttpOnly cookie the browser sends by itself; a page never sees the
 * token. Every failure is an ApiError whose message is the server's own `message`.
 */
import type {
  ArchiveHit,
  Corrected,
  Counts,
  Diagnostics,
  DiagnosticsMetrics,
  ErrorBody,
  KnowledgePage,
  KnowledgeQuery,
  Me,
  Proposal,
  Transcript,
} from "./types.js";

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
    this.name = "ApiError";
  }
}

/** Called when a signed-in request answers 401: the session ended (expired, signed out elsewhere, member removed). */
let unauthorized: (message: string) => void = () => {};
export function onUnauthorized(handler: (message: string) => void): void {
  unauthorized = handler;
}

function isErrorBody(value: unknown): value is ErrorBody {
  return typeof value === "object" && value !== null && typeof (value as ErrorBody).message === "string";
}

/** The message a failed answer carries: the server's `message`, or what little the status says. */
export function errorMessage(status: number, body: unknown, statusText = ""): string {
  if (isErrorBody(body) && body.message !== "") return body.message;
  return `the server answered ${status}${statusText === "" ? "" : ` ${statusText}`}`;
}

async function call<T>(method: "GET" | "POST" | "DELETE", path: string, body?: unknown): Promise<T> {
  let response: Response;
  try {
    // Relative to the page ("api/me"), so the pages work under any base path: the appliance serves them at /remram/,
    // beside the gateway on one host.
    response = await fetch(path.replace(/^\//, ""), {
      method,
      credentials: "same-origin",
      headers:
        body === undefined
          ? { accept: "application/json" }
          : { accept: "application/json", "content-type": "application/json" },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  } catch {
    throw new ApiError(0, "the app is not reachable: check the connection and try again");
  }
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown;
  try {
    parsed = text === "" ? undefined : JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const message = errorMessage(response.status, parsed, response.statusText);
    if (response.status === 401 && path !== "/api/session") unauthorized(message);
    throw new ApiError(response.status, message);
  }
  return parsed as T;
}

/** The query string of GET /api/knowledge: lists comma-joined, empty values left out. */
export function knowledgeSearch(query: KnowledgeQuery): string {
  const params = new URLSearchParams();
  if (query.q !== undefined && query.q.trim() !== "") params.set("q", query.q.trim());
  if (query.status !== undefined && query.status.length > 0) params.set("status", query.status.join(","));
  if (query.scope !== undefined && query.scope.length > 0) params.set("scope", query.scope.join(","));
  if (query.limit !== undefined) params.set("limit", String(query.limit));
  if (query.cursor !== undefined && query.cursor !== "") params.set("cursor", query.cursor);
  if (query.user !== undefined && query.user.trim() !== "") params.set("user", query.user.trim());
  const text = params.toString();
  return text === "" ? "" : `?${text}`;
}

const optional = <K extends string>(key: K, value: string | undefined) =>
  value === undefined || value.trim() === "" ? {} : { [key]: value.trim() };

export const api = {
  me: () => call<Me>("GET", "/api/me"),
  signIn: (token: string) => call<Me>("POST", "/api/session", { token }),
  signOut: () => call<void>("DELETE", "/api/session"),

  knowledge: (query: KnowledgeQuery) => call<KnowledgePage>("GET", `/api/knowledge${knowledgeSearch(query)}`),
  correct: (id: string, statement: string, reason?: string) =>
    call<Corrected>("POST", `/api/knowledge/${encodeURIComponent(id)}/correct`, {
      statement,
      ...optional("reason", reason),
    }),
  forget: (ids: string[], reason?: string, user?: string) =>
    call<Counts>("POST", "/api/knowledge/forget", {
      ids,
      ...optional("reason", reason),
      ...optional("user", user),
    }),
  forgetAll: (confirm: string, reason?: string) =>
    call<Counts>("POST", "/api/knowledge/forget-all", { confirm, ...optional("reason", reason) }),

  searchTranscripts: (query: string | undefined, limit: number) =>
    call<{ results: ArchiveHit[] }>("POST", "/api/transcripts/search", {
      ...optional("query", query),
      limit,
    }),
  transcript: (hash: string) => call<Transcript>("GET", `/api/transcripts/${encodeURIComponent(hash)}`),

  proposals: () => call<{ proposals: Proposal[] }>("GET", "/api/proposals"),
  decide: (name: string, decision: "approve" | "deny", comment?: string) =>
    call<Proposal>(
      "POST",
      `/api/proposals/${encodeURIComponent(name)}/${decision}`,
      optional("comment", comment),
    ),

  diagnostics: () => call<Diagnostics>("GET", "/api/diagnostics"),
  diagnosticsMetrics: () => call<DiagnosticsMetrics>("GET", "/api/diagnostics/metrics"),
};
