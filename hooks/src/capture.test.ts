import { describe, expect, it } from "vitest";
import { captureToolResult, toolResultProvenanceKey } from "./capture.js";
import { parsePluginConfig } from "./config.js";

const capture = parsePluginConfig({ capture: { maxTextChars: 300, skipTools: ["noisy"] } }).capture;
const principal = { userId: "alice", agentId: "main" };
const sessionKey = "agent:main:telegram:direct:123";
const now = new Date("2026-11-22T10:00:00Z");

function toolMessage(overrides: Record<string, unknown> = {}) {
  return {
    role: "toolResult",
    toolCallId: "call_1",
    toolName: "ls",
    content: [{ type: "text", text: "a.txt\nb.txt" }],
    isError: false,
    timestamp: Date.parse("2026-11-22T09:59:59Z"),
    ...overrides,
  };
}

describe("toolResultProvenanceKey", () => {
  it("is stable for one tool call and differs across sessions", () => {
    const base = { agentId: "main", sessionKey, toolCallId: "call_1", toolName: "ls", fallbackContent: "" };
    expect(toolResultProvenanceKey(base)).toBe(
      toolResultProvenanceKey({ ...base, fallbackContent: "other" }),
    );
    expect(toolResultProvenanceKey(base)).not.toBe(
      toolResultProvenanceKey({ ...base, sessionKey: "agent:main:x:direct:y" }),
    );
    expect(toolResultProvenanceKey(base)).toMatch(/^tool:[0-9a-f]{64}$/);
  });

  it("falls back to the content when the call has no id", () => {
    const base = { agentId: "main", sessionKey, toolName: "ls", fallbackContent: "a" };
    expect(toolResultProvenanceKey(base)).not.toBe(
      toolResultProvenanceKey({ ...base, fallbackContent: "b" }),
    );
  });
});

describe("captureToolResult", () => {
  it("turns a tool result message into a Cortex tool_result event owned by the principal", () => {
    const result = captureToolResult(
      { message: toolMessage(), toolName: "ls", toolCallId: "call_1" },
      {},
      principal,
      sessionKey,
      capture,
      now,
    );
    expect(result).toEqual({
      ok: true,
      truncated: false,
      item: {
        kind: "tool_result",
        provenanceKey: toolResultProvenanceKey({
          agentId: "main",
          sessionKey,
          toolCallId: "call_1",
          toolName: "ls",
          fallbackContent: "",
        }),
        sessionId: sessionKey,
        agentId: "main",
        observedAt: "2026-11-22T09:59:59.000Z",
        scope: "user",
        owner: { userId: "alice" },
        tool: "ls",
        toolCallId: "call_1",
        output: "a.txt\nb.txt",
      },
    });
  });

  it("cuts long output and says so", () => {
    const long = toolMessage({ content: [{ type: "text", text: "x".repeat(1000) }] });
    const result = captureToolResult({ message: long }, {}, principal, sessionKey, capture, now);
    expect(result).toMatchObject({ ok: true, truncated: true });
    expect(result.ok && result.item.output.length).toBe(300);
  });

  it("appends structured details and names images instead of inlining them", () => {
    const message = toolMessage({
      content: [{ type: "image", data: "AAAA", mimeType: "image/png" }],
      details: { files: 2 },
    });
    const result = captureToolResult({ message }, {}, principal, sessionKey, capture, now);
    expect(result).toMatchObject({ ok: true, item: { output: '[image image/png]\n\ndetails: {"files":2}' } });
  });

  it("skips synthetic results, skipped tools, non-tool messages, empty output and failed calls", () => {
    const skip = (event: Parameters<typeof captureToolResult>[0]) =>
      captureToolResult(event, {}, principal, sessionKey, capture, now);
    expect(skip({ message: toolMessage(), isSynthetic: true })).toEqual({ ok: false, reason: "synthetic" });
    expect(skip({ message: toolMessage({ toolName: "noisy" }) })).toEqual({
      ok: false,
      reason: "skipped_tool",
    });
    expect(skip({ message: { role: "assistant", content: [] } })).toEqual({
      ok: false,
      reason: "not_a_tool_result",
    });
    expect(skip({ message: toolMessage({ content: [] }) })).toEqual({ ok: false, reason: "empty" });
    const failed = toolMessage({ isError: true, content: [{ type: "text", text: "ENOENT: no such file" }] });
    expect(skip({ message: failed })).toEqual({ ok: false, reason: "tool_error" });
  });

  it("strips injected content from the text and from every string in the details, keyed by the raw output", () => {
    const fact = "Alice's cat is called Miso.";
    const strip = (text: string) => text.replaceAll(fact, "");
    const message = toolMessage({
      toolCallId: undefined,
      content: [{ type: "text", text: `notes: ${fact}` }],
      details: { quoted: `"${fact}"` },
    });
    const result = captureToolResult({ message }, {}, principal, sessionKey, capture, now, strip);
    expect(result).toMatchObject({ ok: true, item: { output: 'notes: \n\ndetails: {"quoted":"\\"\\""}' } });
    // The key identifies the call by what the tool wrote, not by what happened to be injected at the time.
    const plain = captureToolResult({ message }, {}, principal, sessionKey, capture, now);
    expect(result.ok && plain.ok && result.item.provenanceKey).toBe(plain.ok && plain.item.provenanceKey);
  });

  it("skips a result that held nothing but injected content", () => {
    const message = toolMessage({ content: [{ type: "text", text: "echo" }] });
    const result = captureToolResult({ message }, {}, principal, sessionKey, capture, now, () => " ");
    expect(result).toEqual({ ok: false, reason: "injected_only" });
  });
});
