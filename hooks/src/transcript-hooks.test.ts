import { createHash } from "node:crypto";
import { mkdtempSync, rmSync, utimesSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transcriptArchiveRequest } from "@remram/contract";
import { afterEach, describe, expect, it } from "vitest";
import { parsePluginConfig } from "./config.js";
import { DurableQueue } from "./durable-queue.js";
import { rememberInjection } from "./injected-content.js";
import type { TranscriptBody } from "./memory-tools-contract.js";
import { emptyCounters } from "./metrics.js";
import {
  queueStaleTranscripts,
  type TranscriptDeps,
  transcriptSealHook,
  transcriptShutdownHook,
  transcriptStageHook,
} from "./transcript-hooks.js";
import { TranscriptStaging } from "./transcript-staging.js";

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const quiet = { info: () => undefined, warn: () => undefined, error: () => undefined };
const sessionKey = "agent:main:openai-user:alice";
const ctx = { sessionKey, sessionId: "sess-1", agentId: "main", channel: "webchat", trigger: "user" };
const t0 = Date.parse("2026-11-20T10:00:00.000Z");
const turn = (text: string, at: number) => [
  { role: "user", content: text, timestamp: at },
  { role: "assistant", content: [{ type: "text", text: `answer to ${text}` }], timestamp: at + 1 },
];

function setup(archive: Record<string, unknown> = { enabled: true }) {
  const root = mkdtempSync(join(tmpdir(), "remram-transcript-test-"));
  directories.push(root);
  const config = parsePluginConfig({
    archive,
    principals: { identities: { "openai-user:alice": "alice" } },
  });
  const queue = new DurableQueue<TranscriptBody>(
    join(root, "transcript"),
    { maxItems: 100, dropPolicy: "drop-oldest" },
    (payload) => {
      const parsed = transcriptArchiveRequest.safeParse(payload);
      return parsed.success ? parsed.data : undefined;
    },
  );
  const staging = new TranscriptStaging(join(root, "staging"));
  const deps: TranscriptDeps = {
    config,
    counters: emptyCounters(),
    injected: new Map(),
    staging: () => staging,
    transcriptQueue: () => queue,
    logger: quiet,
  };
  return {
    deps,
    queue,
    staging,
    stage: transcriptStageHook(deps, "agent_end"),
    seal: transcriptSealHook(deps),
  };
}

const queued = (queue: DurableQueue<TranscriptBody>) => queue.peek(100).map((entry) => entry.payload);

describe("transcripts from the hooks to the durable queue", () => {
  it("stages each turn, merges snapshots, and on reset queues the whole session once, owned by its person", () => {
    const { queue, staging, stage, seal, deps } = setup();
    stage({ messages: turn("hi", t0) }, ctx);
    stage({ messages: [...turn("hi", t0), ...turn("plant beans", t0 + 10)] }, ctx);
    expect(staging.read("sess-1")?.messages).toHaveLength(4);
    seal({ sessionId: "sess-1", sessionKey, messageCount: 4, reason: "reset" }, { sessionId: "sess-1" });
    const [body, ...rest] = queued(queue);
    expect(rest).toEqual([]);
    expect(body).toMatchObject({
      principal: { userId: "alice", agentId: "main" },
      sessionId: "sess-1",
      channel: "webchat",
      endReason: "reset",
      privacy: "private",
      allowRecall: true,
    });
    expect(body?.messages.map((message) => message.content)).toEqual([
      "hi",
      "answer to hi",
      "plant beans",
      "answer to plant beans",
    ]);
    expect(staging.read("sess-1")).toBeUndefined();
    expect(deps.counters.transcripts).toMatchObject({ staged_agent_end: 2, queued: 1 });
  });

  it("on shutdown queues what it has and keeps the session, so after the restart only the new turns follow", () => {
    const { queue, staging, stage, seal } = setup();
    stage({ messages: turn("before restart", t0) }, ctx);
    seal({ sessionId: "sess-1", sessionKey, messageCount: 2, reason: "shutdown" }, { sessionId: "sess-1" });
    expect(queued(queue)).toHaveLength(1);
    expect(staging.read("sess-1")?.archivedThrough).toBe(2);
    // The session goes on after the restart; its history comes back in the snapshot and is not sent again.
    stage({ messages: [...turn("before restart", t0), ...turn("after restart", t0 + 100)] }, ctx);
    seal({ sessionId: "sess-1", sessionKey, messageCount: 4, reason: "daily" }, { sessionId: "sess-1" });
    const bodies = queued(queue);
    expect(bodies.map((body) => body.messages.map((message) => message.content))).toEqual([
      ["before restart", "answer to before restart"],
      ["after restart", "answer to after restart"],
    ]);
    expect(bodies.map((body) => body.endReason)).toEqual(["shutdown", "daily"]);
  });

  it("at gateway stop queues every staged session's new messages and keeps them staged, once", () => {
    const { deps, queue, staging, stage } = setup();
    const stop = transcriptShutdownHook(deps);
    stage({ messages: turn("one", t0) }, ctx);
    stage({ messages: turn("two", t0) }, { ...ctx, sessionId: "sess-2" });
    stop({ reason: "gateway restarting" }, {});
    expect(
      queued(queue)
        .map((body) => [body.sessionId, body.endReason])
        .sort(),
    ).toEqual([
      ["sess-1", "restart"],
      ["sess-2", "restart"],
    ]);
    expect(staging.read("sess-1")?.archivedThrough).toBe(2);
    stop({ reason: "gateway stopping" }, {});
    expect(queue.depth).toBe(2);
  });

  it("discards a deleted session, parts still queued included", () => {
    const { queue, staging, stage, seal } = setup();
    stage({ messages: turn("one", t0) }, ctx);
    seal({ sessionId: "sess-1", sessionKey, messageCount: 2, reason: "restart" }, { sessionId: "sess-1" });
    stage({ messages: [...turn("one", t0), ...turn("two", t0 + 9)] }, ctx);
    stage({ messages: turn("elsewhere", t0) }, { ...ctx, sessionId: "sess-2" });
    seal({ sessionId: "sess-2", sessionKey, messageCount: 2, reason: "idle" }, { sessionId: "sess-2" });
    seal({ sessionId: "sess-1", sessionKey, messageCount: 4, reason: "deleted" }, { sessionId: "sess-1" });
    expect(queued(queue).map((body) => body.sessionId)).toEqual(["sess-2"]);
    expect(staging.read("sess-1")).toBeUndefined();
  });

  it("strips what was injected for the person and stages nothing for sessions without a single owner", () => {
    const { deps, staging, stage } = setup();
    rememberInjection(
      deps.injected,
      { agentId: "main", userId: "alice" },
      {
        text: "block",
        itemTexts: ["Alice's cat is called Miso."],
      },
    );
    stage(
      { messages: [{ role: "user", content: "Alice's cat is called Miso. What else?", timestamp: t0 }] },
      ctx,
    );
    expect(staging.read("sess-1")?.messages.map((message) => message.content)).toEqual(["What else?"]);
    for (const other of [
      { ...ctx, sessionId: "g", sessionKey: "agent:main:telegram:group:42" },
      { ...ctx, sessionId: "c", trigger: "cron" },
      { ...ctx, sessionId: "r", sessionKey: "agent:main:subagent:remram-reflect-x-1" },
      { ...ctx, sessionId: undefined },
    ]) {
      stage({ messages: turn("x", t0) }, other);
    }
    expect(["g", "c", "r"].map((id) => staging.read(id))).toEqual([undefined, undefined, undefined]);
  });

  it("does nothing while the archive is off", () => {
    const { queue, staging, stage, seal } = setup({ enabled: false });
    stage({ messages: turn("hi", t0) }, ctx);
    seal({ sessionId: "sess-1", sessionKey, messageCount: 2, reason: "reset" }, { sessionId: "sess-1" });
    expect(staging.read("sess-1")).toBeUndefined();
    expect(queue.depth).toBe(0);
  });

  it("queues a session that never ended once it is stale, and nothing fresher", () => {
    const { deps, queue, staging, stage } = setup({ enabled: true, staleAfterHours: 1 });
    stage({ messages: turn("abandoned", t0) }, ctx);
    stage({ messages: turn("live", t0) }, { ...ctx, sessionId: "sess-2" });
    const old = (Date.now() - 2 * 3_600_000) / 1000;
    const file = `${createHash("sha256").update("sess-1").digest("hex")}.json`;
    utimesSync(join(staging.directory, file), old, old);
    expect(queueStaleTranscripts(deps, new Date())).toBe(1);
    expect(queued(queue).map((body) => [body.sessionId, body.endReason])).toEqual([["sess-1", "unknown"]]);
    expect(staging.read("sess-1")).toBeUndefined();
    expect(staging.read("sess-2")).toBeDefined();
  });
});
