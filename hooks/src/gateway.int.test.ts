import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { freePort } from "../../test/harness/src/ports.js";
import { chatCompletionRequests, promptText } from "../../test/harness/src/services/openai-recorder.js";
import { sendMessage } from "../../test/harness/src/services/openclaw.js";
import { blockBegin } from "./injection.js";
import {
  metricValue,
  type PluginGateway,
  queuedCaptures,
  readMetrics,
  startPluginGateway,
} from "./testing/gateway-fixture.js";

// REMRAM_TESTBED=ollama: a real gateway with the plugin from hooks/, SmolLM2 answering; Cortex is down.
const ollama = testbedEndpoints("ollama");

describe("the plugin inside a real OpenClaw gateway, with Cortex down", () => {
  let fixture: PluginGateway;

  beforeAll(async () => {
    const cortexPort = await freePort();
    fixture = await startPluginGateway({
      ollama,
      config: ({ metricsPort, queueDir }) => ({
        cortex: { url: `http://127.0.0.1:${cortexPort}` },
        principals: { identities: { "openai-user:alice": "alice" } },
        queue: { path: queueDir, drainIntervalMs: 200, backoffInitialMs: 200, backoffMaxMs: 1_000 },
        reflection: { enabled: false },
        metrics: { port: metricsPort },
      }),
    });
  });

  afterAll(async () => {
    await fixture?.stop();
  });

  it("loads from the package folder and serves its counters", async () => {
    const metrics = await readMetrics(fixture.metricsUrl);
    expect(metrics).toContain("# TYPE remram_hooks_injections_total counter");
  });

  it("answers a message without injection and counts the failed retrieval", async () => {
    const reply = await sendMessage(fixture.gateway.endpoints, {
      text: "Say hello in one short sentence.",
      user: "alice",
    });
    expect(reply.trim()).not.toBe("");
    const lastCall = chatCompletionRequests(fixture.recorder.requests).at(-1);
    expect(promptText(lastCall?.body)).not.toContain(blockBegin);
    const metrics = await readMetrics(fixture.metricsUrl);
    expect(
      metricValue(metrics, "remram_hooks_injection_skips_total", 'reason="cortex_error"'),
    ).toBeGreaterThanOrEqual(1);
    expect(metricValue(metrics, "remram_hooks_injections_total")).toBe(0);
  });

  it("queues a tool result durably, once, while Cortex cannot take it", async () => {
    await sendMessage(fixture.gateway.endpoints, {
      text: 'Look at the file. [[tool:read {"path":"HELLO.md"}]]',
      user: "alice",
    });
    console.log("offered tools", fixture.relay.offeredTools());
    expect(fixture.relay.toolCallsIssued()).toBe(1);
    const queued = queuedCaptures(fixture.queueDir);
    console.log(JSON.stringify(queued, null, 1));
    expect(queued).toHaveLength(1);
    expect(queued[0]?.payload).toMatchObject({
      kind: "tool_result",
      tool: "read",
      owner: { userId: "alice" },
    });
  });
});
