/**
 * Test support: the real OpenClaw gateway with this plugin loaded from the package folder, SmolLM2 behind a
 * recording proxy and the tool-call relay, and the plugin's metrics port and queue folder chosen by the test
 * (the queue lives outside the gateway's HOME so it survives a gateway restart).
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { repoRoot, runDir } from "../../../test/harness/src/paths.js";
import { freePort } from "../../../test/harness/src/ports.js";
import {
  type OpenAiRecorder,
  startOpenAiRecorder,
} from "../../../test/harness/src/services/openai-recorder.js";
import {
  deepMerge,
  type OpenClawModelProvider,
  type OpenClawPlugin,
  openClawProviderId,
  providerConfig,
  startOpenClaw,
} from "../../../test/harness/src/services/openclaw.js";
import type {
  OllamaEndpoints,
  OpenClawEndpoints,
  Started,
} from "../../../test/harness/src/services/types.js";
import type { PluginConfigInput } from "../config.js";
import { pluginId } from "../plugin.js";
import { reflectionResponseFormat } from "../reflection.js";
import { bundlePlugin } from "../tools/bundle-plugin.js";
import { hooksRoot } from "../tools/paths.js";
import { startToolCallRelay, type ToolCallRelay } from "./tool-call-relay.js";

const shortSystemPromptPlugin: OpenClawPlugin = {
  id: "remram-probe",
  path: join(repoRoot, "test/harness/fixtures/openclaw-probe-plugin"),
  config: { systemPrompt: "You are a helpful personal assistant. Answer in one or two short sentences." },
};

/** The provider entry reflection runs use in the test gateway (see startPluginGateway). */
export const reflectionProviderId = "testbed-reflect";

export interface PluginGateway {
  gateway: Started<OpenClawEndpoints>;
  recorder: OpenAiRecorder;
  relay: ToolCallRelay;
  metricsUrl: string;
  queueDir: string;
  config: PluginConfigInput;
  /** Stop the gateway only, keeping the queue folder, the model path and the ports for a restart. */
  stopGateway(): Promise<void>;
  startGateway(): Promise<void>;
  stop(): Promise<void>;
}

/** The plugin's Cortex credential as the pod mounts it: <runDir>/<folder>/cortex-token, mode 0600; its path. */
export function writeCortexTokenFile(folder: string, token: string): string {
  const dir = join(runDir, folder);
  mkdirSync(dir, { recursive: true });
  const tokenFile = join(dir, "cortex-token");
  writeFileSync(tokenFile, `${token}\n`, { mode: 0o600 });
  return tokenFile;
}

export async function startPluginGateway(params: {
  ollama: OllamaEndpoints;
  config: (ports: { metricsPort: number; queueDir: string }) => PluginConfigInput;
  /** Offer the model the `read` tool (for tool-result capture); without tools SmolLM2's prompt is far smaller. */
  withTools: boolean;
  extraConfig?: Record<string, unknown>;
  /** Merged key by key into the fixture's config last (extraConfig's top-level keys replace the fixture's). */
  mergeConfig?: Record<string, unknown>;
  /** The relay answers a scripted tool call's result with this text itself, without the model. */
  replyAfterScriptedTool?: string;
  /** The model's context window as OpenClaw sees it (default 8192, SmolLM2's). */
  contextWindow?: number;
  /** Bundled OpenClaw plugins to load besides this one, e.g. ["telegram"] for the channel. */
  bundledPlugins?: readonly string[];
  /** Extra environment for the gateway, e.g. { OPENCLAW_SKIP_CHANNELS: "0" } to start configured channels. */
  env?: Readonly<Record<string, string>>;
  /** The Ollama model reflection runs use (default the chat model), e.g. a few-shot model a test created. */
  reflectionModel?: string;
  /**
   * More params of the reflection model's entry, e.g. { temperature: 0 } for a few-shot model (Ollama's OpenAI
   * API samples at temperature 1 when a request names none, whatever the Modelfile says).
   */
  reflectionParams?: Record<string, unknown>;
  /**
   * The system prompt of a person's runs: "short" (default) puts a one-line prompt in place of OpenClaw's ~2,000-token
   * core through the probe plugin, so a turn costs SmolLM2 seconds instead of most of a minute of prompt evaluation;
   * "openclaw" keeps the core prompt. Either way the plugin's block is appended after it and reflection runs keep
   * their own prompt.
   */
  systemPrompt?: "short" | "openclaw";
}): Promise<PluginGateway> {
  await bundlePlugin();
  const relay = await startToolCallRelay({
    upstream: `${params.ollama.url}/v1`,
    ...(params.replyAfterScriptedTool === undefined
      ? {}
      : { replyAfterScriptedTool: params.replyAfterScriptedTool }),
  });
  const recorder = await startOpenAiRecorder({ upstream: relay.url });
  const metricsPort = await freePort();
  mkdirSync(runDir, { recursive: true });
  const queueDir = mkdtempSync(join(runDir, "remram-hooks-queue-"));
  const config = params.config({ metricsPort, queueDir });
  const reflectionModel = params.reflectionModel ?? params.ollama.chatModel;
  const provider: OpenClawModelProvider = {
    api: "openai-completions",
    baseUrl: recorder.url,
    model: params.ollama.chatModel,
    supportsTools: params.withTools,
    contextWindow: params.contextWindow ?? 8192,
    // Short answers: what is asserted is what the model received, and CPU time is shared.
    maxTokens: 48,
  };
  const start = () =>
    startOpenClaw({
      provider,
      plugins: [
        {
          id: pluginId,
          path: hooksRoot,
          config: config as Record<string, unknown>,
          hooks: { timeouts: { agent_end: 60_000 } },
        },
        ...((params.systemPrompt ?? "short") === "short" ? [shortSystemPromptPlugin] : []),
      ],
      ...(params.bundledPlugins === undefined ? {} : { bundledPlugins: params.bundledPlugins }),
      ...(params.env === undefined ? {} : { env: params.env }),
      // One tool keeps OpenClaw's prompt inside SmolLM2's 8k window (all of them estimate at ~10k tokens).
      extraConfig: deepMerge(
        {
          ...(params.withTools ? { tools: { allow: ["read"] } } : {}),
          // Reflection runs on the same SmolLM2 through a second provider entry whose params hold the delta's JSON
          // schema, so the model's reply is grammar-constrained (the plugin's reflection.model names it).
          models: {
            providers: {
              [reflectionProviderId]: providerConfig({
                ...provider,
                model: reflectionModel,
                supportsTools: false,
                maxTokens: 256,
              }),
            },
          },
          // A plugin may pick the model of its subagent runs only when the gateway allows it, and only these.
          plugins: {
            // The plugin holds the memory slot (manifest kind "memory"); with the harness's "none" it would not load.
            slots: { memory: pluginId },
            entries: {
              // Else memory-core loads as the slot holder's dreaming sidecar (memory-guard.ts refuses that).
              "memory-core": { enabled: false },
              [pluginId]: {
                subagent: {
                  allowModelOverride: true,
                  allowedModels: [`${reflectionProviderId}/${reflectionModel}`],
                },
              },
            },
          },
          agents: {
            defaults: {
              models: {
                [`${openClawProviderId}/${provider.model}`]: {},
                [`${reflectionProviderId}/${reflectionModel}`]: {
                  params: { response_format: reflectionResponseFormat(), ...params.reflectionParams },
                },
              },
            },
          },
          ...params.extraConfig,
        },
        params.mergeConfig ?? {},
      ),
    });
  const fixture: PluginGateway = {
    gateway: await start(),
    recorder,
    relay,
    metricsUrl: `http://127.0.0.1:${metricsPort}/metrics`,
    queueDir,
    config,
    async stopGateway() {
      await fixture.gateway.stop();
    },
    async startGateway() {
      fixture.gateway = await start();
    },
    async stop() {
      await fixture.gateway.stop();
      await recorder.stop();
      await relay.stop();
      rmSync(queueDir, { recursive: true, force: true });
    },
  };
  return fixture;
}

/** One sample of the plugin's Prometheus text, e.g. metric(text, "remram_hooks_queue_depth", 'queue="capture"'). */
export function metricValue(text: string, name: string, labels = ""): number {
  const prefix = labels === "" ? `${name} ` : `${name}{${labels}} `;
  const line = text.split("\n").find((candidate) => candidate.startsWith(prefix));
  return line === undefined ? 0 : Number(line.slice(prefix.length));
}

export async function readMetrics(url: string): Promise<string> {
  const response = await fetch(url, { signal: AbortSignal.timeout(5_000) });
  if (!response.ok) throw new Error(`metrics answered HTTP ${response.status}`);
  return response.text();
}

/** The capture queue's items on disk. */
export function queuedCaptures(queueDir: string): { key: string; payload: Record<string, unknown> }[] {
  const directory = join(queueDir, "capture");
  let names: string[];
  try {
    names = readdirSync(directory).filter((name) => name.endsWith(".json"));
  } catch {
    return [];
  }
  return names.sort().map((name) => JSON.parse(readFileSync(join(directory, name), "utf8")));
}
