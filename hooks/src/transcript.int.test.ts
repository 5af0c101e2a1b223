import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { runDir } from "../../test/harness/src/paths.js";
import { callGateway, openClawProviderId, sendMessage } from "../../test/harness/src/services/openclaw.js";
import type { OpenClawEndpoints } from "../../test/harness/src/services/types.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { type CortexProcess, cortexProcess } from "./testing/cortex-process.js";
import {
  metricValue,
  type PluginGateway,
  readMetrics,
  startPluginGateway,
  writeCortexTokenFile,
} from "./testing/gateway-fixture.js";

// REMRAM_TESTBED=opensearch,ollama: the real gateway with the plugin (holding the memory slot), SmolLM2 answering,
// and the real Cortex on the test bed's OpenSearch. A session ends; its transcript reaches the archive and the
// chunks index; the agent's memory tools find and recall it, for its person only.
const ollama = testbedEndpoints("ollama");
const opensearch = testbedEndpoints("opensearch");
const turnTimeoutMs = 240_000;
const testTimeoutMs = 600_000;

/** One tool call through the gateway's /tools/invoke, in the given session (the tool sees its trusted context). */
async function invokeTool(
  endpoints: OpenClawEndpoints,
  tool: string,
  args: Record<string, unknown>,
  sessionKey: string,
): Promise<{ status: number; text: string }> {
  const response = await fetch(`${endpoints.url}/tools/invoke`, {
    method: "POST",
    headers: { authorization: `Bearer ${endpoints.token}`, "content-type": "application/json" },
    body: JSON.stringify({ tool, args, sessionKey }),
    signal: AbortSignal.timeout(60_000),
  });
  const body = (await response.json()) as { result?: { content?: { text?: string }[] }; error?: unknown };
  const text = body.result?.content?.map((block) => block.text ?? "").join("\n") ?? JSON.stringify(body);
  return { status: response.status, text };
}

const sessionOf = (user: string) => `agent:main:openai-user:${user}`;

describe("session transcripts through the real gateway into Cortex's archive, and the memory tools", () => {
  let cortex: CortexProcess;
  let fixture: PluginGateway;
  const metrics = () => readMetrics(fixture.metricsUrl);
  const archived = async () =>
    metricValue(await metrics().catch(() => ""), "remram_hooks_transcripts_total", 'outcome="archived"');
  const send = (text: string, user: string) =>
    sendMessage(fixture.gateway.endpoints, { text, user, timeoutMs: turnTimeoutMs });
  const retrieveChunks = async (userId: string, requestText: string) => {
    const response = await fetch(`${cortex.url}/retrieve`, {
      method: "POST",
      headers: { authorization: `Bearer ${cortex.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        principal: { userId, agentId: "main" },
        requestText,
        tokenBudget: 2000,
        modelLocation: "local",
      }),
    });
    return ((await response.json()) as { chunks: { text: string; documentHash?: string | null }[] }).chunks;
  };

  beforeAll(async () => {
    cortex = await cortexProcess({ opensearchUrl: opensearch.url, ollamaUrl: ollama.url });
    await cortex.start();
    const tokenFile = writeCortexTokenFile(`hooks-token-${cortex.indexPrefix}`, cortex.token);
    fixture = await startPluginGateway({
      ollama,
      withTools: false,
      config: ({ metricsPort, queueDir }) => ({
        cortex: { url: cortex.url, tokenFile, retrieveTimeoutMs: 4_000 },
        principals: { identities: { "openai-user:carol": "carol", "openai-user:dave": "dave" } },
        escalation: { localProviders: [openClawProviderId] },
        queue: { path: queueDir, drainIntervalMs: 250, backoffInitialMs: 250, backoffMaxMs: 2_000 },
        // Reflection runs would queue behind the turns on two shared cores; this suite is about transcripts.
        reflection: { enabled: false },
        archive: { enabled: true },
        metrics: { port: metricsPort },
      }),
    });
    console.log(`gateway log: ${fixture.gateway.processes[0]?.logFile}; Cortex at ${cortex.url}`);
  }, testTimeoutMs);

  afterAll(async () => {
    await fixture?.stop();
    await cortex?.stop();
    if (cortex !== undefined)
      rmSync(join(runDir, `hooks-token-${cortex.indexPrefix}`), { recursive: true, force: true });
  }, testTimeoutMs);

  it(
    "archives a reset session's transcript under its hash; memory_search finds it, memory_get recalls it for its person only",
    async () => {
      const fact = "The lighthouse keeper's logbook is kept in the blue trunk in the attic.";
      await send(`${fact} Please remember where it is.`, "carol");
      await callGateway(fixture.gateway.endpoints, "sessions.reset", { key: sessionOf("carol") });
      await waitFor(async () => ((await archived()) >= 1 ? true : undefined), {
        what: "the transcript delivered to Cortex",
        timeoutMs: 120_000,
        intervalMs: 500,
      });

      const search = await invokeTool(
        fixture.gateway.endpoints,
        "memory_search",
        { query: "lighthouse keeper logbook trunk" },
        sessionOf("carol"),
      );
      expect(search.status, search.text).toBe(200);
      const hash = /hash ([a-f0-9]{64})/.exec(search.text)?.[1];
      expect(hash, search.text).toBeDefined();
      expect(search.text).toContain("summaries only");

      const recalled = await invokeTool(
        fixture.gateway.endpoints,
        "memory_get",
        { hash },
        sessionOf("carol"),
      );
      expect(recalled.status, recalled.text).toBe(200);
      expect(recalled.text).toContain(`Archived conversation ${hash}`);
      expect(recalled.text).toContain(fact);
      expect(recalled.text).toMatch(/Assistant: \S/);

      // Another person gets neither the document nor a hint that it exists.
      const foreign = await invokeTool(fixture.gateway.endpoints, "memory_get", { hash }, sessionOf("dave"));
      expect(foreign.text).toContain("not available");
      expect(foreign.text).not.toContain("lighthouse");
      const foreignSearch = await invokeTool(
        fixture.gateway.endpoints,
        "memory_search",
        { query: "lighthouse keeper logbook trunk" },
        sessionOf("dave"),
      );
      expect(foreignSearch.text).not.toContain(hash ?? "-");

      // Retrieval serves the transcript's chunks to its person, each citing the archive hash.
      const chunks = await retrieveChunks("carol", "Where is the lighthouse keeper's logbook kept?");
      expect(chunks.filter((chunk) => chunk.documentHash === hash).length).toBeGreaterThan(0);
      expect(
        (await retrieveChunks("dave", "Where is the lighthouse keeper's logbook kept?")).map(
          (c) => c.documentHash,
        ),
      ).not.toContain(hash);
    },
    testTimeoutMs,
  );

  it(
    "queues a session's transcript durably when the gateway shuts down and archives it after the next start",
    async () => {
      const fact = "The spare bicycle pump hangs behind the greenhouse door.";
      await send(fact, "dave");
      await cortex.kill();
      await fixture.stopGateway();
      const queued = readdirSync(join(fixture.queueDir, "transcript")).filter((name) =>
        name.endsWith(".json"),
      );
      expect(queued).toHaveLength(1);

      await fixture.startGateway();
      await cortex.start();
      await waitFor(
        async () =>
          readdirSync(join(fixture.queueDir, "transcript")).filter((name) => name.endsWith(".json"))
            .length === 0
            ? true
            : undefined,
        { what: "the transcript queue to drain after the restart", timeoutMs: 180_000, intervalMs: 500 },
      );
      expect(await archived()).toBeGreaterThan(0);
      const search = await invokeTool(
        fixture.gateway.endpoints,
        "memory_search",
        { query: "spare bicycle pump greenhouse" },
        sessionOf("dave"),
      );
      expect(search.text).toMatch(/hash [a-f0-9]{64}/);
    },
    testTimeoutMs,
  );
});
