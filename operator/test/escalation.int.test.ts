import { readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type CortexProcess, cortexProcess } from "../../hooks/src/testing/cortex-process.js";
import {
  metricValue,
  type PluginGateway,
  readMetrics,
  startPluginGateway,
  writeCortexTokenFile,
} from "../../hooks/src/testing/gateway-fixture.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { runDir } from "../../test/harness/src/paths.js";
import {
  chatCompletionRequests,
  type OpenAiRecorder,
  promptText,
  type RecordedRequest,
  startOpenAiRecorder,
} from "../../test/harness/src/services/openai-recorder.js";
import { openClawProviderId, sendMessage } from "../../test/harness/src/services/openclaw.js";
import { cloudApiKeyEnv } from "../src/appliance/openclaw-escalation.js";
import { gatewayConfigFor } from "../src/appliance/testing/context.js";

// REMRAM_TESTBED=opensearch,ollama: the escalation config the operator generates, on the real OpenClaw gateway with
// the Remram plugin and the real Cortex. The "cloud" is the test bed's Ollama behind a recording proxy of its own
// (its OpenAI-compatible /v1 and its Anthropic-compatible /v1/messages), so what reaches the cloud is seen exactly,
// and the key the gateway presents with it.
const ollama = testbedEndpoints("ollama");
const opensearch = testbedEndpoints("opensearch");
const turnTimeoutMs = 300_000;
const testTimeoutMs = 900_000;
const cloudKey = "sk-remram-escalation-test-0123456789abcdef";
const cloudProvider = "cloudsim";
/** A small local window, so that a page of notes is context pressure without a minute of CPU per turn. */
const localWindow = 2048;

const spec = (api: "openai-completions" | "anthropic-messages") => ({
  ollama: { contextWindow: localWindow },
  escalation: {
    cloud: {
      provider: cloudProvider,
      api,
      baseUrl: "https://llm.example.net/v1",
      model: ollama.chatModel,
      apiKeySecretRef: { name: "cloud-key", key: "apiKey" },
      contextWindow: 8192,
      maxOutputTokens: 48,
    },
    domains: [{ name: "health", keywords: ["doctor", "medication"], policy: "local-only" }],
  },
});

interface GeneratedConfig {
  models: { providers: Record<string, Record<string, unknown>> };
  plugins: {
    allow: string[];
    entries: { "remram-hooks": { config: { escalation: Record<string, unknown> } } };
  };
}

/** Every file under `dir` whose bytes contain `needle`. */
function filesContaining(dir: string, needle: string): string[] {
  const found: string[] = [];
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    const path = join(entry.parentPath, entry.name);
    if (entry.isFile() && statSync(path).size < 64 * 1024 * 1024 && readFileSync(path).includes(needle))
      found.push(path);
  }
  return found;
}

describe("escalation to a cloud model, as the operator configures it, on a real gateway", () => {
  let cortex: CortexProcess;
  let tokenFile: string;

  beforeAll(async () => {
    cortex = await cortexProcess({ opensearchUrl: opensearch.url, ollamaUrl: ollama.url });
    await cortex.start();
    tokenFile = writeCortexTokenFile(`escalation-secrets-${cortex.indexPrefix}`, cortex.token);
    const response = await fetch(`${cortex.url}/ingest`, {
      method: "POST",
      headers: { authorization: `Bearer ${cortex.token}`, "content-type": "application/json" },
      body: JSON.stringify({
        events: [
          {
            kind: "knowledge",
            provenanceKey: "alice-cat",
            scope: "user",
            owner: { userId: "alice" },
            privacy: "private",
            statement: "Alice's cat is called Miso.",
            type: "fact",
            source: "user",
            confidence: 0.9,
          },
        ],
      }),
    });
    expect(response.status, await response.text()).toBe(200);
  }, testTimeoutMs);

  afterAll(async () => {
    await cortex?.stop();
    if (cortex !== undefined)
      rmSync(join(runDir, `escalation-secrets-${cortex.indexPrefix}`), { recursive: true, force: true });
  }, testTimeoutMs);

  /**
   * The operator's config for the spec, on the fixture's gateway: the cloud provider's entry and the plugin's policy
   * as generated, pointed at the recording proxy; the box's Ollama is the fixture's own provider.
   */
  const startEscalationGateway = async (
    api: "openai-completions" | "anthropic-messages",
    cloud: OpenAiRecorder,
  ): Promise<PluginGateway> => {
    const generated = gatewayConfigFor(spec(api), { cloudKeyVersion: "1" }) as unknown as GeneratedConfig;
    const entry = generated.models.providers[cloudProvider];
    if (entry === undefined) throw new Error("the operator generated no cloud provider");
    const policy = generated.plugins.entries["remram-hooks"].config.escalation;
    const models = entry.models as Record<string, unknown>[];
    return startPluginGateway({
      ollama,
      withTools: false,
      env: { [cloudApiKeyEnv]: cloudKey },
      bundledPlugins: generated.plugins.allow.filter((id) => id !== "ollama" && id !== "remram-hooks"),
      config: ({ metricsPort, queueDir }) => ({
        cortex: { url: cortex.url, tokenFile, retrieveTimeoutMs: 4_000 },
        principals: { identities: { "openai-user:alice": "alice", "openai-user:carol": "carol" } },
        escalation: {
          ...policy,
          local: { provider: openClawProviderId, model: ollama.chatModel, contextWindow: localWindow },
          localProviders: [openClawProviderId],
        },
        queue: { path: queueDir, drainIntervalMs: 250 },
        reflection: { enabled: false },
        archive: { enabled: false },
        metrics: { port: metricsPort },
      }),
      mergeConfig: {
        models: {
          providers: {
            [cloudProvider]: {
              ...entry,
              // Anthropic's SDK adds /v1 itself; an OpenAI-compatible root ends in it.
              baseUrl: api === "anthropic-messages" ? cloud.url.replace(/\/v1$/, "") : cloud.url,
              // Test-bed quirks of the stand-in, not of a hosted model: Ollama's /v1 reads max_tokens only, and
              // SmolLM2 on two cores cannot read the 10k-token prompt every tool's schema makes (OpenClaw would
              // compact it first, in a call of its own): offered no tools, the cloud's prompt is as small as the
              // box's model's.
              models: models.map((model) => ({
                ...model,
                compat: { maxTokensField: "max_tokens", supportsTools: false },
              })),
            },
          },
        },
        // The fixture lists the models runs may use; the cloud model joins them, as in the generated config
        // (which lists none, so any configured model may run).
        agents: { defaults: { models: { [`${cloudProvider}/${ollama.chatModel}`]: {} } } },
      },
    });
  };

  const sentTo = (requests: readonly RecordedRequest[], text: string): RecordedRequest[] =>
    requests.filter((request) => JSON.stringify(request.body).includes(text));

  it(
    "keeps ordinary turns on the box, escalates on a directive, pressure or complexity with the key from the environment, and never sends private knowledge or a local-only topic out",
    async () => {
      const cloud = await startOpenAiRecorder({ upstream: `${ollama.url}/v1` });
      const gateway = await startEscalationGateway("openai-completions", cloud);
      const local = gateway.recorder;
      const turn = (text: string, user: string) =>
        sendMessage(gateway.gateway.endpoints, { text, user, timeoutMs: turnTimeoutMs });
      try {
        const ordinary = "Good morning! Any idea for a quick breakfast?";
        const directive = "#cloud Suggest a name for a small sailing boat.";
        const privateAsk = "#cloud What is my cat called?";
        const health = "#cloud My doctor changed my medication, what should I ask her next time?";
        const notes = Array.from(
          { length: 40 },
          (_, index) =>
            `Meeting note ${index + 1}: the roof contractor will send a revised quote for the gutters and the north-facing slope before the end of the month.`,
        ).join(" ");
        const pressure = `Summarise these notes in one line. ${notes}`;
        const complex =
          "Compare the trade-offs of these two plans step by step and analyse the risks:\n```\nplan A: rent a van\nplan B: hire movers\n```";
        // A session each: a session's transcript counts toward the next turn's context pressure.
        for (const [text, user] of [
          [ordinary, "carol"],
          [directive, "dave"],
          [privateAsk, "alice"],
          [health, "erin"],
          [pressure, "frank"],
          [complex, "grace"],
        ] as const) {
          expect((await turn(text, user)).trim(), text).not.toBe("");
        }

        const cloudChats = chatCompletionRequests(cloud.requests);
        const localChats = chatCompletionRequests(local.requests);
        for (const text of [directive, pressure.slice(0, 60), complex.slice(0, 60)]) {
          expect(sentTo(cloudChats, text), text).toHaveLength(1);
          expect(sentTo(localChats, text), text).toHaveLength(0);
        }
        for (const text of [ordinary, privateAsk, health]) {
          expect(sentTo(localChats, text), text).toHaveLength(1);
          expect(sentTo(cloudChats, text), text).toHaveLength(0);
        }
        // The key came from the environment, and only the cloud saw it.
        expect(new Set(cloudChats.map((request) => request.credential))).toEqual(
          new Set([`Bearer ${cloudKey}`]),
        );
        expect(localChats.map((request) => request.credential)).not.toContain(`Bearer ${cloudKey}`);
        // Nothing private ever went out: the cloud's prompts hold no memory of Alice's.
        expect(cloudChats.map((request) => promptText(request.body)).join("\n")).not.toContain("Miso");
        expect(
          sentTo(localChats, privateAsk)
            .map((request) => promptText(request.body))
            .join(""),
        ).toContain("Alice's cat is called Miso.");

        // Each decision is counted with its reason, and logged with it.
        const metrics = await readMetrics(gateway.metricsUrl);
        const decisions = (decision: string) =>
          metricValue(metrics, "remram_hooks_escalations_total", `decision="${decision}"`);
        expect(decisions("local:default_local")).toBe(1);
        expect(decisions("cloud:user_directive_cloud")).toBe(1);
        expect(decisions("local:privacy_private_knowledge")).toBe(1);
        expect(decisions("local:domain_local_only")).toBe(1);
        expect(decisions("cloud:context_pressure")).toBe(1);
        expect(decisions("cloud:complexity")).toBe(1);
        const logFile = gateway.gateway.processes[0]?.logFile;
        if (logFile === undefined) throw new Error("the gateway has no log file");
        const logged = readFileSync(logFile, "utf8");
        for (const reason of [
          "user_directive_cloud",
          "privacy_private_knowledge",
          "domain_local_only",
          "context_pressure",
          "complexity",
        ])
          expect(logged, reason).toMatch(new RegExp(`escalation_decision.*${reason}`));

        // The key is in no file the gateway wrote: not its config, state, sessions or logs.
        expect(filesContaining(gateway.gateway.endpoints.home, cloudKey)).toEqual([]);
        expect(logged).not.toContain(cloudKey);
      } finally {
        await gateway.stop();
        await cloud.stop();
      }
    },
    testTimeoutMs,
  );

  it(
    "reaches a cloud model on Anthropic's Messages API with the key as x-api-key",
    async () => {
      const cloud = await startOpenAiRecorder({ upstream: `${ollama.url}/v1` });
      const gateway = await startEscalationGateway("anthropic-messages", cloud);
      try {
        const directive = "#cloud Name one famous lighthouse.";
        const reply = await sendMessage(gateway.gateway.endpoints, {
          text: directive,
          user: "carol",
          timeoutMs: turnTimeoutMs,
        });
        expect(reply.trim()).not.toBe("");
        const messages = cloud.requests.filter((request) => request.path === "/messages");
        expect(sentTo(messages, directive)).toHaveLength(1);
        expect(messages.map((request) => request.status)).toEqual([200]);
        expect(messages[0]?.credential).toBe(cloudKey);
        expect(sentTo(chatCompletionRequests(gateway.recorder.requests), directive)).toHaveLength(0);
      } finally {
        await gateway.stop();
        await cloud.stop();
      }
    },
    testTimeoutMs,
  );
});
