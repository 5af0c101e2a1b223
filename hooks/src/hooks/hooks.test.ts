import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type PluginConfigInput, parsePluginConfig } from "../config.js";
import { emptyCounters } from "../metrics.js";
import type { AgentHookContext, HostLogger } from "../openclaw-api.js";
import { derivePrincipal, type PrincipalLookup } from "../principal.js";
import { openQueues } from "../queues.js";
import type { SharedState } from "../shared-state.js";
import { renderedBundle } from "../testing/rendered-bundle.js";
import { reflectionTriggerHook } from "./agent-end.js";
import { escalationHook } from "./before-model-resolve.js";
import { injectionHook } from "./before-prompt-build.js";
import type { Retrieve } from "./retrieve.js";
import { captureHook } from "./tool-result-persist.js";

/** The hook handlers wired as plugin.ts wires them, on a state and queues of their own. */

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

const logger: HostLogger = { info: () => undefined, warn: () => undefined, error: () => undefined };
const fact = "Alice's cat is called Miso.";
const chunk = "Earlier: we agreed the NAS backs up nightly to the garage disk.";
const bundle = renderedBundle({
  facts: [{ id: "f1", statement: fact, type: "fact", scope: "user", privacy: "private", confidence: 0.9 }],
  chunks: [{ id: "k1", text: chunk, scope: "user", privacy: "private" }],
});

function wired(input: PluginConfigInput = {}, answer = bundle) {
  const queuePath = mkdtempSync(join(tmpdir(), "remram-hooks-test-"));
  directories.push(queuePath);
  const config = parsePluginConfig({
    principals: { identities: { "openai-user:alice": "alice" } },
    queue: { path: queuePath },
    ...input,
  });
  const state: SharedState = {
    counters: emptyCounters(),
    prefetch: new Map(),
    transcriptTokens: new Map(),
    injected: new Map(),
    queues: new Map(),
    reflectionAttempts: new Map(),
    reflectionTargets: new Map(),
    reflectionInvalidReplies: new Map(),
  };
  const queues = openQueues(state, config, queuePath);
  const principalOf: PrincipalLookup = (ctx) =>
    derivePrincipal(ctx, config.principals, config.injection.groupSessions);
  const requests: Parameters<Retrieve>[] = [];
  const retrieve: Retrieve = async (...args) => {
    requests.push(args);
    return { status: "ok", bundle: answer };
  };
  const counters = state.counters;
  return {
    state,
    queues,
    requests,
    resolve: escalationHook({ config, state, principalOf, retrieve, logger }),
    inject: injectionHook({ config, state, principalOf, retrieve, logger }),
    /** The model location of each /retrieve so far. */
    locations: () => requests.map(([, , location]) => location),
    capture: captureHook({
      config,
      counters,
      injected: state.injected,
      principalOf,
      captureQueue: () => queues.capture,
      logger,
    }),
    end: reflectionTriggerHook({
      config,
      counters,
      injected: state.injected,
      reflectionTargets: state.reflectionTargets,
      principalOf,
      reflectionQueue: () => queues.reflection,
      logger,
    }),
  };
}

const ctx: AgentHookContext = {
  agentId: "main",
  sessionKey: "agent:main:openai-user:alice",
  runId: "run-1",
  modelProviderId: "ollama",
  trigger: "user",
};
const text = (value: string) => [{ type: "text", text: value }];

describe("adversarial: injected content, through the hook handlers", () => {
  it("keeps what before_prompt_build injected out of the captured tool result and the reflection input", async () => {
    const hooks = wired();
    const injected = await hooks.inject({ prompt: "What is my cat called?", messages: [] }, ctx);
    const block = injected?.appendSystemContext ?? "";
    expect(block).toContain(fact);
    // Exactly what Cortex rendered, never a rendering of the plugin's own.
    expect(block).toBe(bundle.bundle.text);

    // A file the user saved the block into, its delimiter mangled on the way, read back by a tool.
    const mangled = block
      .replace("<<<remram-knowledge", "[remram memory]")
      .replace("remram-knowledge>>>", "");
    hooks.capture(
      {
        toolName: "read",
        toolCallId: "call-1",
        message: {
          role: "toolResult",
          toolCallId: "call-1",
          toolName: "read",
          content: text(`${mangled}\nThe shed door sticks in winter.`),
          isError: false,
          timestamp: Date.now(),
        },
      },
      { agentId: "main", sessionKey: ctx.sessionKey },
    );
    const [captured] = hooks.queues.capture.peek(1);
    expect(captured?.payload.output).toContain("The shed door sticks in winter.");
    expect(captured?.payload.output).not.toContain("Miso");
    expect(captured?.payload.output).not.toContain("garage disk");

    await hooks.end(
      {
        runId: "run-1",
        success: true,
        messages: [
          { role: "user", content: text(`You said: ${fact} Is that right? Also, I bought a kayak.`) },
          { role: "assistant", content: text(`Yes: ${fact.toUpperCase()}`) },
        ],
      },
      ctx,
    );
    const [job] = hooks.queues.reflection.peek(1);
    expect(job?.payload.interaction).toContain("I bought a kayak.");
    expect(job?.payload.interaction).not.toMatch(/miso/i);
    expect(hooks.state.counters.injectedStripped.tool_result).toBeGreaterThan(0);
    expect(hooks.state.counters.injectedStripped.reflection_input).toBe(2);
  });
});

describe("the model location sent with /retrieve", () => {
  const cloudConfig: PluginConfigInput = {
    escalation: {
      local: { provider: "ollama", model: "qwen3:8b" },
      cloud: { provider: "anthropic", model: "claude-sonnet" },
    },
  };
  const prompt = { prompt: "What is my cat called?", messages: [] };

  it("is local for an Ollama run and cloud for any other provider, prefetched once per run", async () => {
    const local = wired();
    await local.resolve({ prompt: prompt.prompt }, ctx);
    await local.inject(prompt, ctx);
    expect(local.locations()).toEqual(["local"]);

    const cloud = wired();
    const cloudRun = { ...ctx, modelProviderId: "openai" };
    await cloud.resolve({ prompt: prompt.prompt }, cloudRun);
    await cloud.inject(prompt, cloudRun);
    expect(cloud.locations()).toEqual(["cloud"]);
  });

  it("follows the escalation: a run headed for the cloud model asks for a cloud bundle", async () => {
    const hooks = wired({ escalation: { ...cloudConfig.escalation, allowPrivateToCloud: true } });
    const override = await hooks.resolve({ prompt: "/cloud What is my cat called?" }, ctx);
    expect(override).toEqual({ providerOverride: "anthropic", modelOverride: "claude-sonnet" });
    await hooks.inject(prompt, { ...ctx, modelProviderId: "anthropic" });
    expect(hooks.locations()).toEqual(["cloud"]);
  });

  it("asks again for a cloud bundle when the run ends up on a cloud model after a local prefetch", async () => {
    const hooks = wired(cloudConfig);
    await hooks.resolve({ prompt: prompt.prompt }, ctx);
    // Another plugin (or the knowledge's size) moved the run to the cloud after the prefetch.
    await hooks.inject(prompt, { ...ctx, modelProviderId: "anthropic" });
    expect(hooks.locations()).toEqual(["local", "cloud"]);
  });

  it("asks for the local bundle while the privacy veto can fire, so the veto sees private items", async () => {
    const hooks = wired(cloudConfig);
    // Headed for the cloud, then kept local by the private knowledge in the bundle (the privacy veto): Cortex
    // leaves private items out of a cloud bundle, so the prefetch asks as for the local model.
    const override = await hooks.resolve({ prompt: "/cloud What is my cat called?" }, ctx);
    expect(override).toEqual({ providerOverride: "ollama", modelOverride: "qwen3:8b" });
    const injected = await hooks.inject(prompt, ctx);
    expect(hooks.locations()).toEqual(["local"]);
    expect(injected?.appendSystemContext).toBe(bundle.bundle.text);
  });

  it("treats an unknown provider as cloud, and injects nothing when Cortex's bundle still holds a private item", async () => {
    const unknown = wired();
    const { modelProviderId: _provider, ...withoutProvider } = ctx;
    // The stub answers with private items even for the cloud (as a Cortex from before the rule would).
    const injected = await unknown.inject(prompt, withoutProvider);
    expect(unknown.locations()).toEqual(["cloud"]);
    expect(injected).toBeUndefined();
    expect(unknown.state.counters.privateItemsWithheld).toBe(2);
    expect(unknown.state.counters.injectionSkips.private_knowledge).toBe(1);
  });

  it("weighs Cortex's token count of the block, not an estimate, as the knowledge's context pressure", async () => {
    const tight: PluginConfigInput = {
      escalation: {
        ...cloudConfig.escalation,
        allowPrivateToCloud: true,
        local: { provider: "ollama", model: "qwen3:8b", contextWindow: 512 },
        reservedOutputTokens: 0,
      },
    };
    // The same text; only Cortex's count differs, and it alone decides whether the local window is exceeded.
    const counted = (tokens: number) => ({ ...bundle, bundle: { ...bundle.bundle, tokens } });
    const over = await wired(tight, counted(500)).resolve({ prompt: "hi" }, ctx);
    expect(over).toEqual({ providerOverride: "anthropic", modelOverride: "claude-sonnet" });
    const under = await wired(tight, counted(300)).resolve({ prompt: "hi" }, ctx);
    expect(under).toEqual({ providerOverride: "ollama", modelOverride: "qwen3:8b" });
  });
});

describe("the reflection job, through the hook handlers", () => {
  it("carries the facts the run's injected block showed, for the reflection to act on by id", async () => {
    const hooks = wired();
    await hooks.inject({ prompt: "What is my cat called?", messages: [] }, ctx);
    await hooks.end(
      { runId: "run-1", success: true, messages: [{ role: "user", content: text("I bought a kayak.") }] },
      ctx,
    );
    const [job] = hooks.queues.reflection.peek(1);
    expect(job?.payload.targets).toEqual([
      { id: "f1", statement: fact, type: "fact", scope: "user", privacy: "private" },
    ]);
    // Taken by that run: a later run of the session that injected nothing offers nothing stale.
    expect(hooks.state.reflectionTargets.size).toBe(0);
  });
});

describe("which finished turns are reflected on", () => {
  it("spends no reflection run on small talk, bare questions or passing states, and counts each", async () => {
    const hooks = wired();
    const turns = [
      "thanks!! 😊",
      "What's the capital of Norway?",
      "I'm so tired today.",
      "can you suggest a cake? no nuts, my son Leo is allergic",
    ];
    for (const [index, turn] of turns.entries()) {
      await hooks.end(
        {
          runId: `run-${index}`,
          success: true,
          messages: [
            { role: "user", content: text(turn) },
            { role: "assistant", content: text("Noted.") },
          ],
        },
        { ...ctx, runId: `run-${index}` },
      );
    }
    const queued = hooks.queues.reflection.peek(10).map((entry) => entry.payload.userText);
    expect(queued).toEqual(["can you suggest a cake? no nuts, my son Leo is allergic"]);
    expect(hooks.state.counters.reflections).toEqual({
      skipped_small_talk: 1,
      skipped_question: 1,
      skipped_transient: 1,
    });
  });
});
