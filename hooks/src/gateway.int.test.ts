import { rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { runDir } from "../../test/harness/src/paths.js";
import { chatCompletionRequests, promptText } from "../../test/harness/src/services/openai-recorder.js";
import { openClawProviderId, sendMessage } from "../../test/harness/src/services/openclaw.js";
import { pinned } from "../../test/harness/src/versions.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { blockBegin } from "./injection.js";
import { type CortexFaultProxy, startCortexFaultProxy } from "./testing/cortex-fault-proxy.js";
import { type CortexProcess, cortexProcess } from "./testing/cortex-process.js";
import {
  metricValue,
  type PluginGateway,
  queuedCaptures,
  readMetrics,
  reflectionProviderId,
  startPluginGateway,
  writeCortexTokenFile,
} from "./testing/gateway-fixture.js";

// REMRAM_TESTBED=opensearch,ollama: the real gateway with the plugin from hooks/, SmolLM2 answering, and the
// real Cortex (its own process, behind a proxy that can misbehave on demand) on the test bed's OpenSearch.
const ollama = testbedEndpoints("ollama");
const opensearch = testbedEndpoints("opensearch");
const reflectionMarker = "You extract durable knowledge";
const reflectionModel = pinned("FEWSHOT_MODEL_NAME");
// Generous: on a loaded 2-core box the gateway's event loop can stall for seconds; the hang case checks the cap.
const retrieveTimeoutMs = 4_000;
// The test bed shares two cores with other suites; a SmolLM2 turn through the gateway can take minutes.
const turnTimeoutMs = 240_000;
const testTimeoutMs = 600_000;

describe("the Remram plugin inside a real OpenClaw gateway", () => {
  let cortex: CortexProcess;
  let proxy: CortexFaultProxy;
  let fixture: PluginGateway;

  const cortexPost = async (path: string, body: unknown): Promise<Record<string, unknown>> => {
    const response = await fetch(`${cortex.url}${path}`, {
      method: "POST",
      headers: { authorization: `Bearer ${cortex.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    if (!response.ok) throw new Error(`Cortex ${path} answered ${response.status}: ${text}`);
    return JSON.parse(text) as Record<string, unknown>;
  };
  const chunksWithKey = async (key: string): Promise<number> => {
    const response = await fetch(`${opensearch.url}/${cortex.indexPrefix}-chunks/_count`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ query: { term: { "provenance.key": key } } }),
    });
    return ((await response.json()) as { count: number }).count;
  };
  /** The model request of the user turn that asked `question` (not the reflection run that quotes it). */
  const modelRequestFor = (question: string): string => {
    const prompts = chatCompletionRequests(fixture.recorder.requests)
      .map((request) => promptText(request.body))
      .filter((prompt) => prompt.includes(question) && !prompt.includes(reflectionMarker));
    const last = prompts.at(-1);
    if (last === undefined) throw new Error(`the model never received "${question}"`);
    return last;
  };
  const metrics = (of: PluginGateway = fixture) => readMetrics(of.metricsUrl);
  const send = (text: string, user: string, via: PluginGateway = fixture) =>
    sendMessage(via.gateway.endpoints, { text, user, timeoutMs: turnTimeoutMs });
  let startGateway: (withTools: boolean) => Promise<PluginGateway>;

  beforeAll(async () => {
    cortex = await cortexProcess({ opensearchUrl: opensearch.url, ollamaUrl: ollama.url });
    await cortex.start();
    proxy = await startCortexFaultProxy(cortex.url);
    const tokenFile = writeCortexTokenFile(`hooks-token-${cortex.indexPrefix}`, cortex.token);
    const seed = (userId: string, key: string, statement: string) => ({
      kind: "knowledge",
      provenanceKey: key,
      scope: "user",
      owner: { userId },
      privacy: "private",
      statement,
      type: "fact",
      source: "user",
      confidence: 0.9,
    });
    await cortexPost("/ingest", {
      events: [
        seed("alice", "seed-alice-cat", "Alice's cat is called Miso."),
        seed("bob", "seed-bob-boat", "Bob's sailing boat is named Albatross."),
      ],
    });
    startGateway = (withTools) =>
      startPluginGateway({
        ollama,
        withTools,
        // The few-shot SmolLM2, greedy: plain SmolLM2 at the OpenAI API's default temperature of 1 rambles through
        // the delta's optional fields (claims, adjustments, links) to the 256-token cap more often than not.
        reflectionModel,
        reflectionParams: { temperature: 0 },
        config: ({ metricsPort, queueDir }) => ({
          cortex: { url: proxy.url, tokenFile, retrieveTimeoutMs },
          principals: { identities: { "openai-user:alice": "alice", "openai-user:bob": "bob" } },
          // The test bed's provider serves SmolLM2 from the local Ollama; an unlisted provider counts as cloud and
          // would (rightly) get no private item.
          escalation: { localProviders: [openClawProviderId] },
          queue: { path: queueDir, drainIntervalMs: 250, backoffInitialMs: 250, backoffMaxMs: 2_000 },
          reflection: {
            runTimeoutMs: 120_000,
            model: { provider: reflectionProviderId, model: reflectionModel },
          },
          metrics: { port: metricsPort },
        }),
      });
    // Without tools OpenClaw's prompt stays small enough for SmolLM2 on a shared CPU; the capture test starts
    // its own tool-capable gateway.
    fixture = await startGateway(false);
    console.log(`gateway log: ${fixture.gateway.processes[0]?.logFile}; Cortex at ${cortex.url}`);
  }, testTimeoutMs);

  afterAll(async () => {
    await fixture?.stop();
    await proxy?.stop();
    await cortex?.stop();
    if (cortex !== undefined)
      rmSync(join(runDir, `hooks-token-${cortex.indexPrefix}`), { recursive: true, force: true });
  }, testTimeoutMs);

  it(
    "loads from the package folder and serves its counters",
    async () => {
      // The plugin service starts with the gateway's sidecars, a moment after /readyz.
      const text = await waitFor(() => metrics().catch(() => undefined), {
        what: "the plugin's metrics endpoint",
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      expect(text).toContain("# TYPE remram_hooks_injections_total counter");
    },
    testTimeoutMs,
  );

  it(
    "puts the asking user's knowledge, and only theirs, into the prompt the model receives",
    async () => {
      const aliceQuestion = "What is my cat called, and what is my boat named?";
      const bobQuestion = "Remind me what my boat is named, and my cat.";
      // Both turns reach the model before either's background reflection run queues behind them.
      await Promise.all([send(aliceQuestion, "alice"), send(bobQuestion, "bob")]);

      const alicePrompt = modelRequestFor(aliceQuestion);
      expect(alicePrompt).toContain(blockBegin);
      expect(alicePrompt).toContain("Alice's cat is called Miso.");
      expect(alicePrompt).not.toContain("Albatross");
      const bobPrompt = modelRequestFor(bobQuestion);
      expect(bobPrompt).toContain("Bob's sailing boat is named Albatross.");
      expect(bobPrompt).not.toContain("Miso");
      // The block sits in the system prompt, before the transcript (seed 000 §4.3).
      expect(alicePrompt.indexOf(blockBegin)).toBeLessThan(alicePrompt.indexOf(aliceQuestion));
      const after = await metrics();
      expect(metricValue(after, "remram_hooks_injections_total")).toBeGreaterThanOrEqual(2);
      expect(metricValue(after, "remram_hooks_private_items_withheld_total")).toBe(0);
    },
    testTimeoutMs,
  );

  it(
    "keeps replying while Cortex is dead, queues the tool result on disk, and delivers it exactly once after a gateway restart",
    async () => {
      const tools = await startGateway(true);
      try {
        const note = "The spare key hides under the blue flowerpot by the shed.";
        writeFileSync(join(tools.gateway.endpoints.home, "workspace", "NOTES.md"), `${note}\n`);
        await cortex.kill();

        const started = Date.now();
        const reply = await send('Read my notes file. [[tool:read {"path":"NOTES.md"}]]', "alice", tools);
        expect(reply.trim()).not.toBe("");
        console.log(`reply with Cortex dead after ${Date.now() - started} ms`);
        expect(tools.relay.toolCallsIssued()).toBe(1);
        const queued = queuedCaptures(tools.queueDir);
        expect(queued).toHaveLength(1);
        const event = queued[0]?.payload ?? {};
        expect(event).toMatchObject({
          kind: "tool_result",
          tool: "read",
          scope: "user",
          owner: { userId: "alice" },
        });
        expect(String(event.output)).toContain(note);
        const key = String(event.provenanceKey);
        const before = await metrics(tools);
        expect(
          metricValue(before, "remram_hooks_injection_skips_total", 'reason="cortex_error"'),
        ).toBeGreaterThanOrEqual(1);
        expect(metricValue(before, "remram_hooks_queue_depth", 'queue="capture"')).toBe(1);

        await tools.stopGateway();
        await tools.startGateway();
        expect(queuedCaptures(tools.queueDir)).toHaveLength(1);
        await waitFor(() => metrics(tools).catch(() => undefined), {
          what: "metrics after the restart",
          timeoutMs: 60_000,
        });
        await cortex.start();
        await waitFor(async () => (queuedCaptures(tools.queueDir).length === 0 ? true : undefined), {
          what: "the capture queue to drain into Cortex",
          timeoutMs: 60_000,
          intervalMs: 500,
        });
        expect(metricValue(await metrics(tools), "remram_hooks_ingested_total")).toBe(1);
        const stored = await chunksWithKey(key);
        expect(stored).toBeGreaterThan(0);
        // Delivered again (a crash between Cortex's answer and the queue file's removal): Cortex keeps one copy.
        const again = await cortexPost("/ingest", { events: [event] });
        expect(again).toMatchObject({ created: 0, duplicates: 1 });
        expect(await chunksWithKey(key)).toBe(stored);
      } finally {
        await tools.stop();
      }
    },
    testTimeoutMs,
  );

  it(
    "reflects on finished turns in background runs of their own, never on its own reflections",
    async () => {
      // The reflection model's reply is grammar-constrained to the delta's JSON schema (its response_format), so a
      // finished run extracts a delta and the reflect queue stores it through /reflect.
      await waitFor(
        async () =>
          metricValue(await metrics(), "remram_hooks_reflections_total", 'outcome="stored"') > 0
            ? true
            : undefined,
        { what: "a reflection delta stored through /reflect", timeoutMs: 240_000, intervalMs: 1_000 },
      );
      const reflectionPrompts = chatCompletionRequests(fixture.recorder.requests).filter((request) =>
        promptText(request.body).includes(reflectionMarker),
      );
      expect(reflectionPrompts.length).toBeGreaterThan(0);
      for (const request of reflectionPrompts) {
        const prompt = promptText(request.body);
        expect(prompt).toContain("session=agent:main:subagent:remram-reflect-");
        // No tools, no knowledge block, and never a reflection quoting another reflection.
        expect(request.body).not.toHaveProperty("tools");
        expect(request.body).toMatchObject({ response_format: { type: "json_schema" } });
        expect(prompt).not.toContain(blockBegin);
        expect(prompt.split(reflectionMarker)).toHaveLength(2);
      }
      const text = await metrics();
      expect(
        metricValue(text, "remram_hooks_reflections_total", 'outcome="skipped_own_run"'),
      ).toBeGreaterThan(0);
      expect(metricValue(text, "remram_hooks_reflections_total", 'outcome="extracted"')).toBeGreaterThan(0);
    },
    testTimeoutMs,
  );

  it(
    "survives a Cortex that answers garbage, 500s or hangs, within the retrieve cap",
    async () => {
      for (const mode of ["garbage", "error500", "hang"] as const) {
        proxy.setMode(mode);
        const reply = await send(`Say something kind (${mode}).`, "bob");
        expect(reply.trim()).not.toBe("");
      }
      proxy.setMode("forward");
      const text = await metrics();
      expect(metricValue(text, "remram_hooks_retrieve_errors_total")).toBeGreaterThanOrEqual(2);
      expect(metricValue(text, "remram_hooks_retrieve_timeouts_total")).toBeGreaterThanOrEqual(1);
      // Every retrieval the prompt path waited for ended within the cap (plus scheduling slack on 2 cores).
      const count = metricValue(text, "remram_hooks_retrieve_duration_seconds_count");
      expect(count).toBeGreaterThanOrEqual(3);
      expect(metricValue(text, "remram_hooks_retrieve_duration_seconds_bucket", 'le="5"')).toBe(count);
      const health = await fetch(`${fixture.gateway.endpoints.url}/healthz`);
      expect(health.ok).toBe(true);
    },
    testTimeoutMs,
  );
});
