import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { explicitSaveRequest } from "@remram/contract";
import { afterEach, describe, expect, it } from "vitest";
import { parsePluginConfig } from "./config.js";
import { createCortexClient } from "./cortex-client.js";
import type { ExplicitSaveAnswer, ExplicitSaveBody } from "./cortex-contract.js";
import { DurableQueue } from "./durable-queue.js";
import { type ExplicitSaveDeps, explicitSaveReplyHook, explicitSaveStartHook } from "./explicit-save-hook.js";
import { injectedFor, stripInjected } from "./injected-content.js";
import { emptyCounters } from "./metrics.js";
import type { AgentHookContext } from "./openclaw-api.js";
import { derivePrincipal } from "./principal.js";

const folders: string[] = [];
afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

const logger = { info: () => {}, warn: () => {}, error: () => {} };
const ctx = (runId: string): AgentHookContext => ({
  runId,
  agentId: "main",
  sessionKey: "agent:main:openai-user:alice",
  trigger: "user",
  channel: "webchat",
});
const saved: ExplicitSaveAnswer = {
  id: "ko_1",
  status: "created",
  statement: "I like my coffee black",
  type: "preference",
  scope: "user",
  proposal: { status: "pending", id: "prop-1", artifactPath: "artifacts/users/alice/preferences.md" },
};

/** The hooks over a fetch standing in for Cortex, the real client (timeouts included) and a real queue on disk. */
function bed(fetchImpl: typeof fetch, waitMs = 300) {
  const folder = mkdtempSync(join(tmpdir(), "remram-save-"));
  folders.push(folder);
  const config = parsePluginConfig({
    cortex: { url: "http://cortex.invalid" },
    principals: { identities: { "openai-user:alice": "alice" }, householdId: "home" },
    explicitSave: { waitMs, approval: { appliance: "box", namespace: "home" } },
  });
  const queue = new DurableQueue<ExplicitSaveBody>(
    join(folder, "explicit-save"),
    { maxItems: 10, dropPolicy: "drop-newest" },
    (payload) => {
      const parsed = explicitSaveRequest.safeParse(payload);
      return parsed.success ? parsed.data : undefined;
    },
  );
  const deps: ExplicitSaveDeps = {
    config,
    counters: emptyCounters(),
    injected: new Map(),
    principalOf: (context) => derivePrincipal(context, config.principals, "skip"),
    client: createCortexClient(config.cortex, fetchImpl),
    saveQueue: () => queue,
    logger,
  };
  return {
    deps,
    queue,
    start: explicitSaveStartHook(deps),
    reply: explicitSaveReplyHook(deps),
  };
}

const answering =
  (status: number, body: unknown, sent: unknown[] = []): typeof fetch =>
  async (_url, init) => {
    sent.push(JSON.parse(String(init?.body)));
    return new Response(JSON.stringify(body), { status });
  };
/** A Cortex that never answers: only the client's deadline ends the call. */
const hanging: typeof fetch = (_url, init) =>
  new Promise((_resolve, reject) => {
    init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
  });

describe("explicit saves in a run", () => {
  it("starts the save as the run begins and tells the model the outcome before the prompt is built", async () => {
    const sent: unknown[] = [];
    const { deps, start, reply } = bed(answering(200, saved, sent));
    const message = "Remember that I like my coffee black.";
    expect(start({ prompt: message }, ctx("r1"))).toBeUndefined();
    const result = await reply({ prompt: message, currentUserMessage: message, messages: [] }, ctx("r1"));
    expect(sent).toEqual([
      expect.objectContaining({
        principal: { userId: "alice", householdId: "home", agentId: "main" },
        statement: "I like my coffee black",
        type: "preference",
        scope: "user",
        turnId: "r1",
      }),
    ]);
    expect(result?.appendSystemContext).toContain('"I like my coffee black"');
    expect(result?.appendSystemContext).toContain("kubectl remram approve box-prop-1 -n home");
    expect(deps.counters.explicitSaves).toEqual({ saved: 1 });
    // The turn's reflection reads the message without the saved statement: it is not extracted twice.
    const shown = injectedFor(deps.injected, { agentId: "main", userId: "alice" });
    expect(stripInjected(message, shown).text).not.toContain("coffee");
  });

  it("leaves other messages, reflections and cron runs alone, and never calls Cortex for them", async () => {
    const sent: unknown[] = [];
    const { start, reply } = bed(answering(200, saved, sent));
    const plain = "I can't remember where I put my keys.";
    start({ prompt: plain }, ctx("r2"));
    expect(await reply({ prompt: plain, messages: [] }, ctx("r2"))).toBeUndefined();
    const save = "remember that I like jazz";
    const reflection = { ...ctx("r3"), sessionKey: "agent:main:subagent:remram-reflect-x-1" };
    start({ prompt: save }, reflection);
    expect(await reply({ prompt: save, messages: [] }, reflection)).toBeUndefined();
    const cron = { ...ctx("r4"), trigger: "cron" };
    expect(await reply({ prompt: save, messages: [] }, cron)).toBeUndefined();
    expect(sent).toEqual([]);
  });

  it("saves what 'save this' refers to: the person's previous message", async () => {
    const sent: unknown[] = [];
    const { start, reply } = bed(answering(200, saved, sent));
    start({ prompt: "Save this." }, ctx("r5"));
    const messages = [
      { role: "user", content: "The spare key is under the blue flowerpot." },
      { role: "assistant", content: "Good to know." },
    ];
    const result = await reply(
      { prompt: "Save this.", currentUserMessage: "Save this.", messages },
      ctx("r5"),
    );
    expect(sent).toEqual([
      expect.objectContaining({ statement: "The spare key is under the blue flowerpot" }),
    ]);
    expect(result?.appendSystemContext).toBeDefined();
  });

  it("asks what to save when there is nothing to refer to", async () => {
    const sent: unknown[] = [];
    const { reply } = bed(answering(200, saved, sent));
    const result = await reply({ prompt: "Save this.", messages: [] }, ctx("r6"));
    expect(result?.appendSystemContext).toContain("Ask them what they want remembered");
    expect(sent).toEqual([]);
  });

  it("waits no longer than its bound for a hanging Cortex, queues the save durably and says it will be saved", async () => {
    const { deps, queue, start, reply } = bed(hanging, 300);
    const message = "Remember that the boiler is serviced in May";
    const started = performance.now();
    start({ prompt: message }, ctx("r7"));
    const result = await reply({ prompt: message, messages: [] }, ctx("r7"));
    const waited = performance.now() - started;
    expect(waited).toBeLessThan(1_000);
    expect(result?.appendSystemContext).toContain("will be saved as soon as the service is reachable");
    const [queued] = queue.peek(10);
    expect(queued?.payload).toMatchObject({ statement: "The boiler is serviced in May", turnId: "r7" });
    expect(deps.counters.explicitSaves).toEqual({ queued: 1 });
  });

  it("queues when Cortex is down or failing, but not what Cortex refused for good", async () => {
    const down = bed(async () => {
      throw new TypeError("fetch failed");
    });
    down.start({ prompt: "remember that I run on Sundays" }, ctx("r8"));
    await down.reply({ prompt: "remember that I run on Sundays", messages: [] }, ctx("r8"));
    expect(down.queue.depth).toBe(1);
    const failing = bed(answering(503, { message: "setting up" }));
    await failing.reply({ prompt: "remember that I run on Sundays", messages: [] }, ctx("r9"));
    expect(failing.queue.depth).toBe(1);
    const erased = bed(answering(410, { statusCode: 410, error: "Gone", message: "erased" }));
    const result = await erased.reply({ prompt: "remember that I run on Sundays", messages: [] }, ctx("r10"));
    expect(erased.queue.depth).toBe(0);
    expect(result?.appendSystemContext).toContain("Tell the person it was not saved");
  });
});
