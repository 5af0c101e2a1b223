/**
 * Test support: an OpenAI-compatible relay that lets the test bed's SmolLM2 (which has no tool-calling
 * template) drive one real tool call through the gateway. A user message carrying `[[tool:<name> <json>]]`
 * gets a streamed `tool_calls` answer naming that tool; every other request goes upstream unchanged except
 * that tool definitions are removed, so SmolLM2 writes the reply after the tool ran. The gateway, the tool
 * and the plugin's tool_result_persist path are all real.
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ToolCallRelay {
  /** OpenAI-compatible base URL ending in /v1. */
  url: string;
  /** Tool names the gateway offered the model, from the last chat request that offered any. */
  offeredTools(): string[];
  /** How many scripted tool calls were answered. */
  toolCallsIssued(): number;
  stop(): Promise<void>;
}

const directive = /\[\[tool:([A-Za-z0-9_.-]+)\s+(\{.*?\})\]\]/s;

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function text(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content.map((part) => (isRecord(part) && typeof part.text === "string" ? part.text : "")).join("");
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

function streamToolCall(
  response: ServerResponse,
  model: string,
  name: string,
  args: string,
  callId: string,
): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({
      id: `relay-${callId}`,
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  response.write(
    chunk(
      {
        role: "assistant",
        content: null,
        tool_calls: [{ index: 0, id: callId, type: "function", function: { name, arguments: args } }],
      },
      null,
    ),
  );
  response.write(chunk({}, "tool_calls"));
  response.end("data: [DONE]\n\n");
}

/** A streamed assistant text answer, as the gateway expects from a stream:true request. */
function streamText(response: ServerResponse, model: string, content: string): void {
  response.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  const chunk = (delta: Record<string, unknown>, finish: string | null) =>
    `data: ${JSON.stringify({
      id: "relay-text",
      object: "chat.completion.chunk",
      created: Math.floor(Date.now() / 1000),
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
    })}\n\n`;
  response.write(chunk({ role: "assistant", content }, null));
  response.write(chunk({}, "stop"));
  response.end("data: [DONE]\n\n");
}

export async function startToolCallRelay(options: {
  upstream: string;
  /**
   * Answer the request that carries a scripted call's result with this text instead of asking the model: for
   * tests about the tool call alone, where a small model reading a large tool-laden prompt would only cost time.
   */
  replyAfterScriptedTool?: string;
}): Promise<ToolCallRelay> {
  let offered: string[] = [];
  let issued = 0;
  const upstream = options.upstream.replace(/\/+$/, "");
  const server = createServer((request, response) => {
    void (async () => {
      const raw = await readBody(request);
      const path = (request.url ?? "/").replace(/^\/v1/, "");
      let body: unknown;
      try {
        body = raw.length > 0 ? JSON.parse(raw.toString("utf8")) : undefined;
      } catch {
        body = undefined;
      }
      if (request.method === "POST" && path.startsWith("/chat/completions") && isRecord(body)) {
        const tools = Array.isArray(body.tools) ? body.tools : [];
        if (tools.length > 0) {
          offered = tools.flatMap((tool) => {
            if (!isRecord(tool)) return [];
            const name = isRecord(tool.function) ? tool.function.name : tool.name;
            return typeof name === "string" ? [name] : [];
          });
        }
        const messages = Array.isArray(body.messages) ? body.messages.filter(isRecord) : [];
        // The gateway appends its own context message after the user's: look at the user messages since the
        // last tool result, so a directive is answered once and the turn then goes on to the model.
        const lastTool = messages.findLastIndex((message) => message.role === "tool");
        const wanted =
          tools.length > 0 &&
          messages
            .slice(lastTool + 1)
            .filter((message) => message.role === "user")
            .map((message) => directive.exec(text(message.content)))
            .find((match) => match !== null);
        if (wanted && wanted[1] !== undefined && wanted[2] !== undefined) {
          issued += 1;
          streamToolCall(response, String(body.model), wanted[1], wanted[2], `call_relay_${issued}`);
          return;
        }
        // The result of a scripted call: the last tool message follows a user message with a directive (the
        // gateway may add a context message of its own beside the user's).
        const previousTool = messages.slice(0, Math.max(lastTool, 0)).findLastIndex((m) => m.role === "tool");
        const answersScriptedCall =
          lastTool >= 0 &&
          messages
            .slice(previousTool + 1, lastTool)
            .some((message) => message.role === "user" && directive.test(text(message.content)));
        if (options.replyAfterScriptedTool !== undefined && answersScriptedCall) {
          streamText(response, String(body.model), options.replyAfterScriptedTool);
          return;
        }
        // SmolLM2 cannot take tools, and its template knows no tool role: show the result as user text.
        const { tools: _tools, tool_choice: _choice, ...rest } = body;
        body = {
          ...rest,
          messages: messages.map((message) =>
            message.role === "tool"
              ? { role: "user", content: `Tool result: ${text(message.content)}` }
              : message.role === "assistant" && message.tool_calls !== undefined
                ? { role: "assistant", content: text(message.content) || "(calling a tool)" }
                : message,
          ),
        };
      }
      const forwarded = await fetch(`${upstream}${path}`, {
        method: request.method ?? "GET",
        headers: { "content-type": "application/json" },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      response.writeHead(forwarded.status, {
        "content-type": forwarded.headers.get("content-type") ?? "application/json",
      });
      if (forwarded.body === null) {
        response.end();
        return;
      }
      for await (const part of forwarded.body) response.write(part);
      response.end();
    })().catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(502, { "content-type": "application/json" });
      response.end(JSON.stringify({ error: { message: `tool-call relay: ${String(error)}` } }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/v1`,
    offeredTools: () => offered,
    toolCallsIssued: () => issued,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
