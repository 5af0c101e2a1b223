/**
 * A recording proxy for OpenAI-compatible model traffic: tests put it between OpenClaw and the real model server
 * (Ollama's /v1) and then assert on exactly what the model was sent, prompt injections included.
 */
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from "node:http";
import { request as httpsRequest } from "node:https";
import type { AddressInfo } from "node:net";

export interface RecordedRequest {
  method: string;
  /** Path below the proxy's /v1 root, e.g. "/chat/completions". */
  path: string;
  /** The JSON request body, or undefined for a request without one (GET /v1/models). */
  body: unknown;
  /** The credential the caller presented: its Authorization header, else its x-api-key (Anthropic's API). */
  credential?: string;
  /** The upstream's HTTP status, once it answered. */
  status?: number;
  /** The upstream's whole response body (an SSE stream for stream:true), once it ended. */
  response?: string;
}

export interface OpenAiRecorder {
  /** OpenAI-compatible base URL ending in /v1, to configure as a provider's baseUrl. */
  url: string;
  /** Every forwarded request, oldest first. */
  readonly requests: readonly RecordedRequest[];
  stop(): Promise<void>;
}

export interface OpenAiRecorderOptions {
  /** The upstream OpenAI-compatible base URL, e.g. "http://127.0.0.1:11434/v1" for Ollama. */
  upstream: string;
}

/** The chat completion requests among the recorded ones. */
export function chatCompletionRequests(requests: readonly RecordedRequest[]): RecordedRequest[] {
  return requests.filter((recorded) => recorded.method === "POST" && recorded.path === "/chat/completions");
}

/**
 * All text a chat completion request puts in front of the model, messages joined by newlines.
 * Handles both string content and the array-of-parts form ({type: "text", text}).
 */
export function promptText(body: unknown): string {
  if (!isRecord(body) || !Array.isArray(body.messages)) return "";
  return body.messages
    .filter(isRecord)
    .map((message) => contentText(message.content))
    .join("\n");
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .filter(isRecord)
    .map((part) => (typeof part.text === "string" ? part.text : ""))
    .join("");
}

/**
 * The assistant text of a recorded chat completion response: the joined `delta.content` of an SSE stream, or
 * `choices[0].message.content` of a plain JSON reply.
 */
export function completionText(response: string): string {
  const events = response
    .split("\n")
    .filter((line) => line.startsWith("data:"))
    .map((line) => line.slice("data:".length).trim())
    .filter((data) => data !== "" && data !== "[DONE]");
  if (events.length === 0) return firstChoiceText(parseJson(response), "message");
  return events.map((data) => firstChoiceText(parseJson(data), "delta")).join("");
}

function firstChoiceText(body: unknown, field: "message" | "delta"): string {
  const choice: unknown = isRecord(body) && Array.isArray(body.choices) ? body.choices[0] : undefined;
  const message = isRecord(choice) ? choice[field] : undefined;
  return isRecord(message) && typeof message.content === "string" ? message.content : "";
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Where a proxied path goes upstream: the upstream base plus the path below /v1, query kept. */
export function upstreamUrl(upstream: string, incomingPath: string): URL | undefined {
  const match = /^\/v1(\/[^?]*)?(\?.*)?$/.exec(incomingPath);
  if (!match) return undefined;
  const base = new URL(upstream);
  const target = new URL(base);
  target.pathname = `${base.pathname.replace(/\/+$/, "")}${match[1] ?? ""}`;
  target.search = match[2] ?? "";
  return target;
}

/** Start the proxy on a free 127.0.0.1 port. Responses (SSE streams included) are relayed chunk by chunk. */
export async function startOpenAiRecorder(options: OpenAiRecorderOptions): Promise<OpenAiRecorder> {
  const requests: RecordedRequest[] = [];
  const server = createServer((incoming, outgoing) => {
    void relay(options.upstream, incoming, outgoing, requests).catch((error: unknown) => {
      const message = error instanceof Error ? error.message : String(error);
      if (!outgoing.headersSent) outgoing.writeHead(502, { "content-type": "application/json" });
      outgoing.end(JSON.stringify({ error: { message: `openai-recorder: ${message}` } }));
    });
  });
  await new Promise<void>((resolveListen, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolveListen());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    requests,
    stop: () =>
      new Promise<void>((resolveClose) => {
        server.closeAllConnections();
        server.close(() => resolveClose());
      }),
  };
}

async function relay(
  upstream: string,
  incoming: IncomingMessage,
  outgoing: ServerResponse,
  requests: RecordedRequest[],
): Promise<void> {
  const target = upstreamUrl(upstream, incoming.url ?? "/");
  if (target === undefined) {
    outgoing.writeHead(404, { "content-type": "application/json" });
    outgoing.end(
      JSON.stringify({ error: { message: `openai-recorder proxies /v1 only, not ${incoming.url}` } }),
    );
    return;
  }
  const chunks: Buffer[] = [];
  for await (const chunk of incoming) chunks.push(chunk as Buffer);
  const rawBody = Buffer.concat(chunks);
  const recorded: RecordedRequest = {
    method: incoming.method ?? "GET",
    path: target.pathname.slice(new URL(upstream).pathname.replace(/\/+$/, "").length),
    body: rawBody.length > 0 ? parseJson(rawBody.toString("utf8")) : undefined,
  };
  const credential = incoming.headers.authorization ?? incoming.headers["x-api-key"];
  if (typeof credential === "string") recorded.credential = credential;
  requests.push(recorded);

  const headers = { ...incoming.headers, host: target.host };
  // The body is re-sent as received, so its length is known; a chunked transfer header would contradict it.
  delete headers["transfer-encoding"];
  if (rawBody.length > 0) headers["content-length"] = String(rawBody.length);
  const send = target.protocol === "https:" ? httpsRequest : httpRequest;
  await new Promise<void>((resolveRelay, reject) => {
    const proxied = send(target, { method: incoming.method, headers }, (response) => {
      recorded.status = response.statusCode;
      outgoing.writeHead(response.statusCode ?? 502, response.headers);
      const received: Buffer[] = [];
      response.on("data", (chunk: Buffer) => received.push(chunk));
      response.pipe(outgoing);
      response.once("end", () => {
        recorded.response = Buffer.concat(received).toString("utf8");
        resolveRelay();
      });
      response.once("error", reject);
    });
    proxied.once("error", reject);
    // A client that gives up (OpenClaw aborting a run) must not leave the model generating for nobody.
    outgoing.once("close", () => {
      if (!outgoing.writableFinished) proxied.destroy();
      resolveRelay();
    });
    proxied.end(rawBody);
  });
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}
