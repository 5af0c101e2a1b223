import { transcriptArchiveRequest } from "@remram/contract";
import { describe, expect, it } from "vitest";
import {
  maxMessageChars,
  mergeTranscript,
  transcriptMessages,
  transcriptParts,
  transcriptRequests,
} from "./transcript.js";

const t0 = Date.parse("2026-11-20T10:00:00.000Z");
const user = (text: string, at = t0) => ({ role: "user", content: text, timestamp: at });
const assistant = (content: unknown[], at = t0 + 1000) => ({ role: "assistant", content, timestamp: at });

describe("OpenClaw messages as a transcript", () => {
  it("keeps what was said and done: user text, assistant text and tool calls, tool results, summaries", () => {
    const messages = transcriptMessages([
      user("Read my notes."),
      assistant([
        { type: "thinking", thinking: "private scratchpad" },
        { type: "text", text: "Reading them." },
        { type: "toolCall", id: "c1", name: "read", arguments: { path: "NOTES.md" } },
      ]),
      {
        role: "toolResult",
        toolCallId: "c1",
        toolName: "read",
        content: [{ type: "text", text: "milk" }],
        isError: false,
        timestamp: t0 + 2000,
      },
      { role: "compactionSummary", summary: "Earlier: groceries.", tokensBefore: 900, timestamp: t0 + 3000 },
      { role: "custom", customType: "ui", content: "not conversation", display: true, timestamp: t0 },
      { role: "user", content: "runtime context", timestamp: t0, runtimeContextCarrier: true },
      "not a message",
    ]);
    expect(messages.map(({ role, content }) => ({ role, content }))).toEqual([
      { role: "user", content: "Read my notes." },
      { role: "assistant", content: 'Reading them.\n[tool call read {"path":"NOTES.md"}]' },
      { role: "tool", content: "read: milk" },
      { role: "system", content: "[compaction summary] Earlier: groceries." },
    ]);
    expect(messages[0]?.at).toBe("2026-11-20T10:00:00.000Z");
    expect(JSON.stringify(messages)).not.toContain("scratchpad");
  });

  it("strips injected content, drops what is left empty, and keys each message by what it was before stripping", () => {
    const strip = (text: string) => text.replace(/<<injected>>/g, "");
    const messages = transcriptMessages(
      [user("<<injected>>"), user("Hello <<injected>>there", t0 + 5)],
      strip,
    );
    expect(messages.map((message) => message.content)).toEqual(["Hello there"]);
    const unstripped = transcriptMessages([user("Hello <<injected>>there", t0 + 5)]);
    expect(messages[0]?.key).toBe(unstripped[0]?.key);
  });

  it("marks a recalled memory as such instead of archiving it again", () => {
    const [recalled] = transcriptMessages([
      {
        role: "toolResult",
        toolName: "memory_get",
        content: [{ type: "text", text: "User: my old secret plan" }],
        isError: false,
        timestamp: t0,
      },
    ]);
    expect(recalled?.content).toBe("[memory_get result: recalled memory]");
  });

  it("keeps images as attachments by digest, and cuts a message longer than the contract allows", () => {
    const [withImage] = transcriptMessages([
      {
        role: "user",
        content: [
          { type: "text", text: "Look" },
          { type: "image", data: Buffer.from("png").toString("base64"), mimeType: "image/png" },
        ],
        timestamp: t0,
      },
    ]);
    expect(withImage?.attachments).toEqual([
      { mediaType: "image/png", digest: expect.stringMatching(/^sha256:[a-f0-9]{64}$/) },
    ]);
    const [long] = transcriptMessages([user("x".repeat(maxMessageChars + 10))]);
    expect(long?.content.length).toBe(maxMessageChars);
    expect(long?.content.endsWith("…[cut]")).toBe(true);
  });

  it("merges snapshots by identity: repeated messages once, new ones appended, twins with the same time both kept", () => {
    const first = transcriptMessages([user("hi"), assistant([{ type: "text", text: "hello" }])]);
    const second = transcriptMessages([
      user("hi"),
      assistant([{ type: "text", text: "hello" }]),
      user("ok", t0 + 5000),
      user("ok", t0 + 5000),
    ]);
    const merged = mergeTranscript(first, second);
    expect(merged.map((message) => message.content)).toEqual(["hi", "hello", "ok", "ok"]);
    expect(mergeTranscript(merged, second)).toEqual(merged);
    // After compaction the snapshot holds a summary and the tail: only the summary is new.
    const compacted = transcriptMessages([
      { role: "compactionSummary", summary: "Said hi.", tokensBefore: 10, timestamp: t0 + 6000 },
      user("ok", t0 + 5000),
    ]);
    expect(mergeTranscript(merged, compacted).map((message) => message.content)).toEqual([
      "hi",
      "hello",
      "ok",
      "ok",
      "[compaction summary] Said hi.",
    ]);
  });
});

describe("transcript parts and requests", () => {
  const messages = transcriptMessages(
    Array.from({ length: 7 }, (_, i) => user(`message ${i} ${"w".repeat(90)}`, t0 + i)),
  );

  it("splits by message count and by characters, a long message alone", () => {
    expect(
      transcriptParts(messages, { maxMessages: 3, maxChars: 100_000 }).map((part) => part.length),
    ).toEqual([3, 3, 1]);
    expect(transcriptParts(messages, { maxMessages: 100, maxChars: 250 }).map((part) => part.length)).toEqual(
      [2, 2, 2, 1],
    );
    const big = transcriptMessages([user("a".repeat(500), t0), user("b", t0 + 1)]);
    expect(transcriptParts(big, { maxMessages: 10, maxChars: 100 }).map((part) => part.length)).toEqual([
      1, 1,
    ]);
    expect(transcriptParts([], { maxMessages: 10, maxChars: 100 })).toEqual([]);
  });

  it("builds bodies Cortex's contract accepts, numbered parts, stable keys per range", () => {
    const params = {
      principal: { userId: "alice", householdId: "h1", agentId: "main" },
      sessionId: "5b0c6a4e-2f1d-4a7b-9c3e-8d2f1a0b7c6d",
      channel: "webchat",
      endReason: "reset" as const,
      endedAt: new Date(t0 + 60_000),
      messages,
      privacy: "private" as const,
      allowRecall: true,
      limits: { maxMessages: 4, maxChars: 100_000 },
    };
    const sends = transcriptRequests(params);
    expect(sends.map((send) => send.body.part)).toEqual([
      { index: 0, count: 2 },
      { index: 1, count: 2 },
    ]);
    for (const send of sends) expect(transcriptArchiveRequest.safeParse(send.body).success).toBe(true);
    expect(sends[0]?.body).toMatchObject({
      principal: params.principal,
      endReason: "reset",
      channel: "webchat",
    });
    expect(transcriptRequests(params).map((send) => send.key)).toEqual(sends.map((send) => send.key));
    expect(new Set(sends.map((send) => send.key)).size).toBe(2);
    // An empty channel is named, an overlong session id is hashed into the contract's bound.
    const odd = transcriptRequests({ ...params, channel: " ", sessionId: "s".repeat(300) });
    expect(odd[0]?.body).toMatchObject({
      channel: "unknown",
      sessionId: expect.stringMatching(/^h:[a-f0-9]{40}$/),
    });
  });
});
