import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import {
  chatCompletionRequests,
  completionText,
  promptText,
  startOpenAiRecorder,
  upstreamUrl,
} from "./openai-recorder.js";

describe("the recorder's path mapping", () => {
  it("puts the path below /v1 under the upstream base and keeps the query", () => {
    expect(upstreamUrl("http://127.0.0.1:11434/v1", "/v1/chat/completions")?.href).toBe(
      "http://127.0.0.1:11434/v1/chat/completions",
    );
    expect(upstreamUrl("http://127.0.0.1:11434/v1/", "/v1/models?limit=1")?.href).toBe(
      "http://127.0.0.1:11434/v1/models?limit=1",
    );
  });

  it("refuses paths outside /v1", () => {
    expect(upstreamUrl("http://127.0.0.1:11434/v1", "/api/chat")).toBeUndefined();
    expect(upstreamUrl("http://127.0.0.1:11434/v1", "/v10/models")).toBeUndefined();
  });
});

describe("the prompt text of a chat completion request", () => {
  it("joins string contents and the text parts of array contents, message by message", () => {
    const body = {
      messages: [
        { role: "system", content: "be brief" },
        {
          role: "user",
          content: [{ type: "text", text: "MARKER " }, { type: "image_url" }, { type: "text", text: "hi" }],
        },
      ],
    };
    expect(promptText(body)).toBe("be brief\nMARKER hi");
  });

  it("is empty for something that is not a chat request", () => {
    expect(promptText("not json")).toBe("");
    expect(promptText({ input: "x" })).toBe("");
  });
});

describe("the assistant text of a recorded response", () => {
  it("joins the content deltas of an SSE stream", () => {
    const stream = [
      'data: {"choices":[{"delta":{"role":"assistant","content":"Hel"}}]}',
      "",
      'data: {"choices":[{"delta":{"content":"lo"}}]}',
      "",
      'data: {"choices":[{"delta":{},"finish_reason":"stop"}],"usage":{"total_tokens":3}}',
      "",
      "data: [DONE]",
      "",
    ].join("\n");
    expect(completionText(stream)).toBe("Hello");
  });

  it("reads the message content of a plain JSON reply", () => {
    expect(completionText('{"choices":[{"message":{"role":"assistant","content":"Hi there"}}]}')).toBe(
      "Hi there",
    );
  });
});

describe("the recording proxy", () => {
  const servers: Array<{ stop(): Promise<void> }> = [];
  afterEach(async () => {
    await Promise.all(servers.splice(0).map((server) => server.stop()));
  });

  /** A local upstream whose streamed reply sends one event, then waits until the test lets it finish. */
  async function startStreamingUpstream(): Promise<{ url: string; finish(): void }> {
    let finish = (): void => {};
    const server: Server = createServer((request, response) => {
      request.resume();
      response.writeHead(200, { "content-type": "text/event-stream" });
      response.write('data: {"first":true}\n\n');
      finish = () => response.end("data: [DONE]\n\n");
    });
    await new Promise<void>((listening) => server.listen(0, "127.0.0.1", listening));
    servers.push({
      stop: () =>
        new Promise<void>((closed) => {
          server.closeAllConnections();
          server.close(() => closed());
        }),
    });
    return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`, finish: () => finish() };
  }

  it("relays a streamed reply event by event and records the request body", async () => {
    const upstream = await startStreamingUpstream();
    const recorder = await startOpenAiRecorder({ upstream: upstream.url });
    servers.push(recorder);
    const requestBody = { model: "m", stream: true, messages: [{ role: "user", content: "hello" }] };

    const response = await fetch(`${recorder.url}/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify(requestBody),
    });
    const reader = response.body?.getReader();
    if (reader === undefined) throw new Error("no response body");
    // The upstream has not ended its reply yet: this event can only arrive if the proxy does not buffer.
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain('"first":true');
    upstream.finish();
    let rest = "";
    for (let chunk = await reader.read(); !chunk.done; chunk = await reader.read()) {
      rest += new TextDecoder().decode(chunk.value);
    }
    expect(rest).toContain("[DONE]");

    expect(chatCompletionRequests(recorder.requests)).toEqual([
      {
        method: "POST",
        path: "/chat/completions",
        body: requestBody,
        status: 200,
        response: 'data: {"first":true}\n\ndata: [DONE]\n\n',
      },
    ]);
  });

  it("answers 404 for paths outside /v1 without contacting the upstream", async () => {
    const upstream = await startStreamingUpstream();
    const recorder = await startOpenAiRecorder({ upstream: upstream.url });
    servers.push(recorder);
    const response = await fetch(recorder.url.replace(/\/v1$/, "/api/tags"));
    expect(response.status).toBe(404);
    expect(recorder.requests).toEqual([]);
  });

  it("answers 502 when the upstream cannot be reached", async () => {
    const recorder = await startOpenAiRecorder({ upstream: "http://127.0.0.1:1/v1" });
    servers.push(recorder);
    const response = await fetch(`${recorder.url}/models`);
    expect(response.status).toBe(502);
    expect(recorder.requests).toEqual([{ method: "GET", path: "/models", body: undefined }]);
  });
});
