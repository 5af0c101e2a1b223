import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { runDir } from "../../test/harness/src/paths.js";
import { chatCompletionRequests, promptText } from "../../test/harness/src/services/openai-recorder.js";
import { openClawProviderId, sendMessage } from "../../test/harness/src/services/openclaw.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { saveContextBegin } from "./explicit-save-reply.js";
import { type CortexFaultProxy, startCortexFaultProxy } from "./testing/cortex-fault-proxy.js";
import { type CortexProcess, cortexProcess } from "./testing/cortex-process.js";
import {
  metricValue,
  type PluginGateway,
  readMetrics,
  startPluginGateway,
  writeCortexTokenFile,
} from "./testing/gateway-fixture.js";

// REMRAM_TESTBED=opensearch,ollama: "remember that …" through the real OpenClaw gateway with the plugin from hooks/,
// SmolLM2 answering, the real Cortex (its own process behind a proxy that can hang) on the test bed's OpenSearch.
const ollama = testbedEndpoints("ollama");
const opensearch = testbedEndpoints("opensearch");
const turnTimeoutMs = 240_000;
const testTimeoutMs = 600_000;

interface Stored {
  id: string;
  statement: string;
  userDirective: boolean;
  confidence: number;
  provenance: { source: string };
}

describe("explicit saves through the real OpenClaw gateway", () => {
  let cortex: CortexProcess;
  let proxy: CortexFaultProxy;
  let fixture: PluginGateway;

  const search = async <T>(index: string, query: unknown): Promise<T[]> => {
    await fetch(`${opensearch.url}/${index}/_refresh`, { method: "POST" });
    const response = await fetch(`${opensearch.url}/${index}/_search`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ size: 50, query }),
    });
    const body = (await response.json()) as { hits?: { hits: { _source: T }[] } };
    return body.hits?.hits.map((hit) => hit._source) ?? [];
  };
  const savedObjects = (phrase: string) =>
    search<Stored>(`${cortex.indexPrefix}-knowledge`, {
      bool: {
        filter: [{ term: { "provenance.source": "user" } }],
        must: [{ match_phrase: { statement: phrase } }],
      },
    });
  const pendingProposals = () =>
    search<{ createdAt: string; body: { sourceKnowledgeIds: string[]; id: string } }>(
      `${cortex.indexPrefix}-maturation`,
      { bool: { filter: [{ term: { kind: "proposal" } }, { term: { state: "pending" } }] } },
    );
  /** The model request of the user turn that said `text`. */
  const modelRequestFor = (text: string): string => {
    const prompts = chatCompletionRequests(fixture.recorder.requests)
      .map((request) => promptText(request.body))
      .filter((prompt) => prompt.includes(text));
    const last = prompts.at(-1);
    if (last === undefined) throw new Error(`the model never received "${text}"`);
    return last;
  };
  const send = (text: string) =>
    sendMessage(fixture.gateway.endpoints, { text, user: "alice", timeoutMs: turnTimeoutMs });
  const queuedSaves = () => {
    try {
      return readdirSync(join(fixture.queueDir, "explicit-save")).filter((name) => name.endsWith(".json"));
    } catch {
      return [];
    }
  };

  beforeAll(async () => {
    cortex = await cortexProcess({ opensearchUrl: opensearch.url, ollamaUrl: ollama.url });
    await cortex.start();
    proxy = await startCortexFaultProxy(cortex.url);
    const tokenFile = writeCortexTokenFile(`hooks-token-${cortex.indexPrefix}`, cortex.token);
    fixture = await startPluginGateway({
      ollama,
      withTools: false,
      config: ({ metricsPort, queueDir }) => ({
        cortex: { url: proxy.url, tokenFile, retrieveTimeoutMs: 2_000 },
        principals: { householdId: "home", identities: { "openai-user:alice": "alice" } },
        escalation: { localProviders: [openClawProviderId] },
        queue: { path: queueDir, drainIntervalMs: 250, backoffInitialMs: 250, backoffMaxMs: 2_000 },
        // What is asserted is the save; reflection runs would only compete for the two cores.
        reflection: { enabled: false },
        explicitSave: {
          // The bound on two shared cores, where Cortex's first answers take seconds; the unit test checks the cap.
          waitMs: 5_000,
          deliveryTimeoutMs: 3_000,
          approval: { appliance: "box", namespace: "home" },
        },
        metrics: { port: metricsPort },
      }),
    });
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
    "stores the save at once with the person's trust, proposes its page and tells the model how it is approved",
    async () => {
      const message = "Remember that my bike is the green one with the wicker basket.";
      const sentAt = Date.now();
      const reply = await send(message);
      expect(reply.trim()).not.toBe("");
      const prompt = modelRequestFor(message);
      expect(prompt).toContain(saveContextBegin);
      expect(prompt).toContain('"My bike is the green one with the wicker basket"');
      expect(prompt).toMatch(/kubectl remram approve box-prop-[0-9a-f]+ -n home/);
      // The instruction sits in the system prompt, before the person's message.
      expect(prompt.indexOf(saveContextBegin)).toBeLessThan(prompt.lastIndexOf(message));

      const [stored, ...others] = await savedObjects("green one with the wicker basket");
      expect(others).toEqual([]);
      expect(stored).toMatchObject({ userDirective: true, confidence: 0.9, provenance: { source: "user" } });
      const proposal = (await pendingProposals()).find((p) =>
        p.body.sourceKnowledgeIds.includes(stored?.id ?? ""),
      );
      expect(proposal).toBeDefined();
      // Measured: the message sent to the gateway until Cortex holds the page proposal, pending approval.
      console.log(
        `explicit save through the gateway → pending proposal: ${Date.parse(proposal?.createdAt ?? "") - sentAt} ms`,
      );
      const metrics = await readMetrics(fixture.metricsUrl);
      expect(metricValue(metrics, "remram_hooks_explicit_saves_total", 'outcome="saved"')).toBe(1);
    },
    testTimeoutMs,
  );

  it(
    "saves nothing for a message that only mentions remembering",
    async () => {
      const message = "I can't remember where I parked the car. Any tips?";
      await send(message);
      expect(modelRequestFor(message)).not.toContain(saveContextBegin);
      expect(await savedObjects("where I parked")).toEqual([]);
    },
    testTimeoutMs,
  );

  it(
    "answers within its bound while Cortex hangs, queues the save on disk and stores it once Cortex answers",
    async () => {
      proxy.setMode("hang");
      const message = "Please remember that the spare key hangs in the shed.";
      try {
        const started = Date.now();
        const reply = await send(message);
        console.log(`reply with Cortex hanging after ${Date.now() - started} ms`);
        expect(reply.trim()).not.toBe("");
        expect(modelRequestFor(message)).toContain("will be saved as soon as the service is reachable");
        expect(queuedSaves()).toHaveLength(1);
      } finally {
        proxy.setMode("forward");
      }
      await waitFor(async () => (queuedSaves().length === 0 ? true : undefined), {
        what: "the queued save delivered to Cortex",
        timeoutMs: 60_000,
        intervalMs: 500,
      });
      const stored = await savedObjects("spare key hangs in the shed");
      expect(stored).toHaveLength(1);
      const metrics = await readMetrics(fixture.metricsUrl);
      expect(metricValue(metrics, "remram_hooks_explicit_saves_total", 'outcome="queued"')).toBe(1);
      expect(metricValue(metrics, "remram_hooks_explicit_saves_total", 'outcome="delivered"')).toBe(1);
    },
    testTimeoutMs,
  );
});
