/**
 * The OpenClaw gateway as a test-bed process: a fresh HOME under .remram/run, a generated openclaw.json, a
 * headless `openclaw gateway run` on a free loopback port with token auth, and a small client for its
 * OpenAI-compatible chat endpoint. Each suite starts its own gateway, because provider and plugins differ.
 * docs/testbed-openclaw.md explains every config key used here. A little over 400 lines: the starter and the
 * small client its callers use belong together.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { request as httpRequest } from "node:http";
import { join, resolve } from "node:path";
import { promisify } from "node:util";
import { binPath, cacheDir, runDir } from "../paths.js";
import { freePort } from "../ports.js";
import { spawnService } from "../process.js";
import { pinned } from "../versions.js";
import { httpReady, waitFor } from "../wait.js";
import type { OpenClawEndpoints, Started, StartOptions } from "./types.js";

export interface OpenClawModelProvider {
  /**
   * "openai-completions": an OpenAI-compatible base URL ending in /v1 (Ollama's /v1, or an openai-recorder);
   * "ollama": Ollama's native API root, without /v1.
   */
  api: "openai-completions" | "ollama";
  baseUrl: string;
  /** The model id the provider serves, e.g. "smollm2-135m-instruct". */
  model: string;
  /** Whether the model may be sent tool definitions; SmolLM2's template has none, and Ollama rejects tools then. */
  supportsTools?: boolean;
  contextWindow?: number;
  maxTokens?: number;
}

export interface OpenClawPlugin {
  /** The manifest id (openclaw.plugin.json "id"), the key under plugins.entries. */
  id: string;
  /** The plugin's folder (holding openclaw.plugin.json and package.json). */
  path: string;
  /** plugins.entries.<id>.config; it must satisfy the manifest's configSchema or the gateway refuses to start. */
  config?: Record<string, unknown>;
  /** plugins.entries.<id>.hooks, e.g. { timeouts: { agent_end: 60000 } }; conversation access is always granted. */
  hooks?: Record<string, unknown>;
}

export interface OpenClawOptions extends StartOptions {
  provider: OpenClawModelProvider;
  plugins?: readonly OpenClawPlugin[];
  /**
   * Bundled OpenClaw plugins to load besides the ones the provider needs. Only the listed plugins load
   * (plugins.allow), which keeps start-up short and the gateway free of channels and device features.
   */
  bundledPlugins?: readonly string[];
  /** Extra environment for the gateway process (added to this process's environment). */
  env?: Readonly<Record<string, string>>;
  /** Deep-merged over the generated openclaw.json last, for settings a suite needs beyond the above. */
  extraConfig?: Readonly<Record<string, unknown>>;
}

/** The provider id the generated config registers the model under; model refs read "<provider>/<model>". */
export const openClawProviderId = "testbed";

/** The `models.providers` entry serving one test-bed model through an OpenAI-compatible or native Ollama API. */
export function providerConfig(provider: OpenClawModelProvider): Record<string, unknown> {
  return {
    api: provider.api,
    baseUrl: provider.baseUrl,
    // Ollama and the recorder ignore the key, but the provider must have one.
    apiKey: "testbed-local",
    models: [
      {
        id: provider.model,
        name: provider.model,
        input: ["text"],
        contextWindow: provider.contextWindow ?? 8192,
        maxTokens: provider.maxTokens ?? 256,
        compat: {
          supportsTools: provider.supportsTools ?? false,
          // Ollama's /v1 (0.24) reads max_tokens only; OpenClaw would send max_completion_tokens.
          maxTokensField: "max_tokens",
        },
      },
    ],
  };
}

export interface OpenClawConfigInput {
  port: number;
  token: string;
  /** The agent workspace (bootstrap files, transcripts' cwd). */
  workspace: string;
  /** Where the gateway writes its log file. */
  logFile: string;
  provider: OpenClawModelProvider;
  plugins: readonly OpenClawPlugin[];
  bundledPlugins?: readonly string[];
  extraConfig?: Readonly<Record<string, unknown>>;
}

/** The native Ollama adapter lives in the bundled "ollama" plugin; without it: "No API provider registered". */
function pluginsForProvider(provider: OpenClawModelProvider): string[] {
  return provider.api === "ollama" ? ["ollama"] : [];
}

/** The openclaw.json for a test gateway: loopback + token, one model, built-in memory off, nothing phoning out. */
export function openClawConfig(input: OpenClawConfigInput): Record<string, unknown> {
  const { provider } = input;
  const allowedPlugins = [
    ...new Set([
      ...input.plugins.map((plugin) => plugin.id),
      ...pluginsForProvider(provider),
      ...(input.bundledPlugins ?? []),
    ]),
  ];
  const base: Record<string, unknown> = {
    gateway: {
      mode: "local",
      port: input.port,
      bind: "loopback",
      auth: { mode: "token", token: input.token },
      http: { endpoints: { chatCompletions: { enabled: true } } },
      controlUi: { enabled: false },
    },
    models: {
      mode: "replace",
      catalogRefresh: { enabled: false },
      providers: {
        [openClawProviderId]: providerConfig(provider),
      },
    },
    agents: {
      defaults: {
        model: { primary: `${openClawProviderId}/${provider.model}` },
        workspace: input.workspace,
        sandbox: { mode: "off" },
        // The seeded workspace files (AGENTS.md, SOUL.md, ...) would fill a small model's context window.
        skipBootstrap: true,
        contextInjection: "never",
        heartbeat: { every: "0m" },
      },
    },
    memory: { search: { enabled: false } },
    plugins: {
      // An empty allowlist counts as no allowlist (every bundled plugin loads), so then plugins are switched off.
      ...(allowedPlugins.length === 0 ? { enabled: false } : { allow: allowedPlugins }),
      load: { paths: input.plugins.map((plugin) => resolve(plugin.path)) },
      slots: { memory: "none" },
      entries: Object.fromEntries(
        input.plugins.map((plugin) => [
          plugin.id,
          {
            enabled: true,
            hooks: { ...plugin.hooks, allowConversationAccess: true },
            ...(plugin.config === undefined ? {} : { config: plugin.config }),
          },
        ]),
      ),
    },
    discovery: { mdns: { mode: "off" } },
    update: { checkOnStart: false, auto: { enabled: false } },
    telemetry: { enabled: false },
    browser: { enabled: false },
    logging: { file: input.logFile },
  };
  return deepMerge(base, input.extraConfig ?? {});
}

/** Objects merge key by key; any other value in `override` (arrays included) replaces the base value. */
export function deepMerge(
  base: Readonly<Record<string, unknown>>,
  override: Readonly<Record<string, unknown>>,
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...base };
  for (const [key, value] of Object.entries(override)) {
    const current = merged[key];
    merged[key] = isPlainObject(current) && isPlainObject(value) ? deepMerge(current, value) : value;
  }
  return merged;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * What vitest adds to process.env. OpenClaw is itself tested with vitest and reads VITEST (200+ places in its
 * dist): with it set, the gateway logged nothing after start and a chat turn never finished.
 */
const testRunnerVariables = [
  "VITEST",
  "VITEST_MODE",
  "VITEST_POOL_ID",
  "VITEST_WORKER_ID",
  "TEST",
  "NODE_ENV",
  "FORCE_TTY",
  "BASE_URL",
  "MODE",
  "DEV",
  "PROD",
  "SSR",
  "JEST_WORKER_ID",
];

/**
 * The environment for an OpenClaw process: the caller's, minus the test runner's variables and any OPENCLAW_*
 * setting of the developer's (a stray OPENCLAW_GATEWAY_TOKEN or OPENCLAW_CONFIG_PATH would win over the
 * generated config), plus `overrides`.
 */
export function openClawEnvironment(
  callerEnvironment: Readonly<NodeJS.ProcessEnv>,
  overrides: Readonly<Record<string, string>>,
): NodeJS.ProcessEnv {
  const environment: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(callerEnvironment)) {
    if (testRunnerVariables.includes(key) || key.startsWith("OPENCLAW_")) continue;
    environment[key] = value;
  }
  return { ...environment, ...overrides };
}

/**
 * The npm cache hack/install-openclaw.sh seeds with OpenClaw's Discord plugin, as the gateway image's
 * /opt/openclaw-npm-cache: a gateway with the channel on installs the plugin from a copy of it.
 */
export const openClawNpmCacheSeed = (): string =>
  join(cacheDir, `openclaw-${pinned("OPENCLAW_VERSION")}`, "npm-cache");

/** Start a gateway and wait until /readyz answers 200 (18-31 s on 2 cores, longer when the machine is busy). */
export async function startOpenClaw(options: OpenClawOptions): Promise<Started<OpenClawEndpoints>> {
  const port = await freePort();
  const token = randomBytes(24).toString("hex");
  const home = join(runDir, `openclaw-${port}`);
  rmSync(home, { recursive: true, force: true });
  const stateDir = join(home, ".openclaw");
  const workspace = join(home, "workspace");
  for (const dir of [stateDir, workspace, join(home, "tmp")]) mkdirSync(dir, { recursive: true });
  const config = openClawConfig({
    port,
    token,
    workspace,
    logFile: join(home, "openclaw.log"),
    provider: options.provider,
    plugins: options.plugins ?? [],
    bundledPlugins: options.bundledPlugins,
    extraConfig: options.extraConfig,
  });
  // A regular file: the gateway writes config by atomic rename and rejects symlinks.
  writeFileSync(join(stateDir, "openclaw.json"), `${JSON.stringify(config, null, 2)}\n`);

  const gateway = spawnService({
    name: `openclaw-${port}`,
    command: binPath("openclaw"),
    args: ["gateway", "run"],
    cwd: home,
    detach: options.detach,
    env: openClawEnvironment(process.env, {
      HOME: home,
      TMPDIR: join(home, "tmp"),
      OPENCLAW_SKIP_CHANNELS: "1",
      // Plain text in .remram/logs rather than ANSI colour codes.
      NO_COLOR: "1",
      // OpenClaw compiles ~40 MB of modules on start; a shared cache makes every later start faster.
      NODE_COMPILE_CACHE: join(cacheDir, "openclaw-compile-cache"),
      npm_config_update_notifier: "false",
      ...options.env,
    }),
  });
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitFor(() => httpReady(`${url}/readyz`), {
      what: "OpenClaw gateway",
      timeoutMs: options.timeoutMs ?? 180_000,
      intervalMs: 500,
      abortIf: () => {
        const ended = gateway.exitReason();
        return ended === undefined ? undefined : `${ended}\n${gateway.logTail()}`;
      },
    });
  } catch (error) {
    await gateway.stop();
    throw error;
  }
  return {
    endpoints: { url, token, home },
    processes: [gateway],
    async stop() {
      await gateway.stop();
      // The console log stays in .remram/logs; the state (SQLite, transcripts, plugin captures) is per run.
      rmSync(home, { recursive: true, force: true });
    },
  };
}

export interface OpenClawMessage {
  text: string;
  /** The OpenAI `user` field: the same user continues one session (agent:main:openai-user:<user>). */
  user?: string;
  /** Route to an explicit session key instead (header x-openclaw-session-key). */
  sessionKey?: string;
  timeoutMs?: number;
}

/** Send one user message through the gateway's /v1/chat/completions and return the assistant's reply text. */
export async function sendMessage(endpoints: OpenClawEndpoints, message: OpenClawMessage): Promise<string> {
  const headers: Record<string, string> = {
    authorization: `Bearer ${endpoints.token}`,
    "content-type": "application/json",
  };
  if (message.sessionKey !== undefined) headers["x-openclaw-session-key"] = message.sessionKey;
  const body = JSON.stringify({
    // An agent target, not a provider model: the agent's configured model answers.
    model: "openclaw",
    messages: [{ role: "user", content: message.text }],
    ...(message.user === undefined ? {} : { user: message.user }),
  });
  const response = await postOnFreshConnection(
    `${endpoints.url}/v1/chat/completions`,
    headers,
    body,
    message.timeoutMs ?? 120_000,
  );
  if (response.status !== 200) {
    throw new Error(`OpenClaw chat completion failed: HTTP ${response.status} ${response.text}`);
  }
  return replyText(JSON.parse(response.text));
}

/**
 * POST without connection reuse. fetch() would reuse a pooled keep-alive socket (say, from the readiness polls)
 * that the gateway may close at the same moment, and a POST is not retried: "other side closed" (seen here).
 */
function postOnFreshConnection(
  url: string,
  headers: Readonly<Record<string, string>>,
  body: string,
  timeoutMs: number,
): Promise<{ status: number; text: string }> {
  return new Promise((resolveResponse, reject) => {
    const request = httpRequest(
      url,
      { method: "POST", agent: false, headers: { ...headers, "content-length": Buffer.byteLength(body) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.once("error", reject);
        response.once("end", () =>
          resolveResponse({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
        );
      },
    );
    request.setTimeout(timeoutMs, () =>
      request.destroy(new Error(`no reply from ${url} within ${timeoutMs} ms`)),
    );
    request.once("error", reject);
    request.end(body);
  });
}

/** choices[0].message.content of a chat completion response. */
export function replyText(body: unknown): string {
  const choices = isPlainObject(body) ? body.choices : undefined;
  const first: unknown = Array.isArray(choices) ? choices[0] : undefined;
  const messageField = isPlainObject(first) ? first.message : undefined;
  const content = isPlainObject(messageField) ? messageField.content : undefined;
  if (typeof content !== "string")
    throw new Error(`not a chat completion: ${JSON.stringify(body).slice(0, 500)}`);
  return content;
}

/**
 * Call a Gateway RPC method over its WebSocket with the CLI (`openclaw gateway call <method> --json`), e.g.
 * "health", "sessions.reset" (fires session_end) or "cron.run". Resolves to the parsed JSON result.
 */
export async function callGateway(
  endpoints: OpenClawEndpoints,
  method: string,
  params: Readonly<Record<string, unknown>> = {},
  timeoutMs = 60_000,
): Promise<unknown> {
  const run = promisify(execFile);
  let stdout: string;
  try {
    ({ stdout } = await run(
      binPath("openclaw"),
      [
        "gateway",
        "call",
        method,
        "--json",
        "--params",
        JSON.stringify(params),
        "--url",
        endpoints.url.replace(/^http/, "ws"),
        "--token",
        endpoints.token,
        "--timeout",
        String(timeoutMs),
      ],
      // The gateway's own HOME, so the CLI shares its state directory and config.
      {
        env: openClawEnvironment(process.env, { HOME: endpoints.home, NO_COLOR: "1" }),
        timeout: timeoutMs + 30_000,
      },
    ));
  } catch (error) {
    // The default message repeats the command line, gateway token included; keep only what the CLI said.
    const output =
      error instanceof Error && "stderr" in error
        ? `${error.stderr}${"stdout" in error ? error.stdout : ""}`
        : String(error);
    throw new Error(`openclaw gateway call ${method} failed: ${output.trim().slice(0, 2000)}`);
  }
  return JSON.parse(stdout);
}
