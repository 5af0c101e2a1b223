import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../inject.js";
import { repoRoot } from "../paths.js";
import {
  chatCompletionRequests,
  completionText,
  type OpenAiRecorder,
  promptText,
  startOpenAiRecorder,
} from "./openai-recorder.js";
import { callGateway, sendMessage, startOpenClaw } from "./openclaw.js";
import type { OpenClawEndpoints, Started } from "./types.js";

// REMRAM_TESTBED=ollama: the gateway answers with the test bed's SmolLM2, seen through a recording proxy.
const ollama = testbedEndpoints("ollama");
const probePlugin = join(repoRoot, "test/harness/fixtures/openclaw-probe-plugin");
const marker = `remram-probe-marker-${process.pid}`;

describe("the OpenClaw gateway on the test bed", () => {
  let recorder: OpenAiRecorder;
  let gateway: Started<OpenClawEndpoints>;

  beforeAll(async () => {
    recorder = await startOpenAiRecorder({ upstream: `${ollama.url}/v1` });
    gateway = await startOpenClaw({
      // A short reply and (through the probe) a short system prompt: SmolLM2 runs on a shared 2-core CPU.
      provider: { api: "openai-completions", baseUrl: recorder.url, model: ollama.chatModel, maxTokens: 8 },
      plugins: [
        {
          id: "remram-probe",
          path: probePlugin,
          config: { marker, systemPrompt: "You are a terse assistant." },
        },
      ],
    });
  });

  afterAll(async () => {
    await gateway?.stop();
    await recorder?.stop();
  });

  it("reports the probe plugin, and no other, as loaded over its RPC", async () => {
    const health = await callGateway(gateway.endpoints, "health");
    expect(health).toMatchObject({ ok: true, plugins: { loaded: ["remram-probe"], errors: [] } });
  });

  it("refuses the chat endpoint without the gateway token", async () => {
    const response = await fetch(`${gateway.endpoints.url}/v1/chat/completions`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ model: "openclaw", messages: [{ role: "user", content: "hi" }] }),
    });
    expect(response.status).toBe(401);
  });

  it("answers a user message with SmolLM2's words, and the model saw the probe plugin's marker", async () => {
    const reply = await sendMessage(gateway.endpoints, {
      text: "Say hello in one short sentence.",
      user: "probe",
      timeoutMs: 280_000,
    });

    const modelCalls = chatCompletionRequests(recorder.requests);
    expect(modelCalls.length).toBeGreaterThan(0);
    const lastCall = modelCalls.at(-1);
    expect(lastCall?.status).toBe(200);
    expect(lastCall?.body).toMatchObject({ model: ollama.chatModel });
    // The plugin was loaded from its folder, got its config, and its before_prompt_build hook ran.
    expect(promptText(lastCall?.body)).toContain(marker);
    expect(lastCall?.body).toHaveProperty(["messages", 0, "role"], "system");
    expect(lastCall?.body).toHaveProperty(
      ["messages", 0, "content"],
      expect.stringMatching(/^You are a terse assistant\./),
    );
    // The reply is what the model generated, not a gateway error text. With max_tokens reached, OpenClaw
    // appends "⚠️ Reply truncated at the model's output token limit…" after it.
    const generated = completionText(lastCall?.response ?? "").trim();
    expect(generated).not.toBe("");
    expect(reply.slice(0, generated.length)).toBe(generated);
    // Seen on the shared 2-core machine at load 20: 23 s of gateway preparation, 55 s until SmolLM2's first
    // byte, then about 5 s per generated token.
  }, 290_000);
});
