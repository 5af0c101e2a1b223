import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { binPath, cacheDir, runDir } from "../paths.js";
import { freePort } from "../ports.js";
import { type ManagedProcess, spawnService } from "../process.js";
import { pinned, readVersionsEnv } from "../versions.js";
import { httpReady, waitFor } from "../wait.js";
import type { OllamaEndpoints, Started, StartOptions, TestbedModels } from "./types.js";

/** Where hack/install-ollama.sh registers the models. */
export const ollamaModelsDir = join(cacheDir, "ollama-models");

const installHint = "run `bash hack/install-ollama.sh` (or `make setup`)";

export interface StartOllamaOptions extends StartOptions {
  /**
   * Models directory to serve; defaults to the installer's. The server only reads it, but for the model registry's
   * seed (model-registry.ts): a second name for each model while it is pushed, deleted again.
   */
  modelsDir?: string;
}

/** The model names pinned in hack/versions.env, so the installer and the harness agree on them. */
export function pinnedModelNames(versionsEnv: string): TestbedModels {
  return {
    embedModel: pinned("EMBED_MODEL_NAME", versionsEnv),
    chatModel: pinned("CHAT_MODEL_NAME", versionsEnv),
    fewshotModel: pinned("FEWSHOT_MODEL_NAME", versionsEnv),
  };
}

/** The wanted models that /api/tags does not list (it names them "name:tag"; a bare name means ":latest"). */
export function missingModels(listed: readonly string[], wanted: readonly string[]): string[] {
  return wanted.filter((name) => !listed.includes(name) && !listed.includes(`${name}:latest`));
}

/**
 * `ollama serve` on a free loopback port over the installer's models, with both models loaded before it
 * resolves: loading is where a broken build or model shows itself, and tests then never pay for it.
 */
export async function startOllama(options: StartOllamaOptions = {}): Promise<Started<OllamaEndpoints>> {
  const binary = binPath("ollama");
  if (!existsSync(binary)) throw new Error(`ollama is not installed at ${binary}: ${installHint}`);
  const models = pinnedModelNames(readVersionsEnv());
  const modelsDir = options.modelsDir ?? ollamaModelsDir;
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  // The server writes its key pair under $HOME/.ollama; keep that out of the user's home.
  const home = join(runDir, `ollama-${port}`);
  mkdirSync(home, { recursive: true });

  const server = spawnService({
    name: `ollama-${port}`,
    command: binary,
    args: ["serve"],
    detach: options.detach,
    env: {
      ...process.env,
      HOME: home,
      OLLAMA_HOST: `127.0.0.1:${port}`,
      OLLAMA_MODELS: modelsDir,
      // Startup would otherwise delete blobs it considers unused from the shared cache.
      OLLAMA_NOPRUNE: "1",
      OLLAMA_NO_CLOUD: "1",
      // The embedder and the chat model stay resident side by side for the whole run.
      OLLAMA_MAX_LOADED_MODELS: "2",
      OLLAMA_KEEP_ALIVE: "-1",
      // Two requests per model at once (e.g. ingest embedding while retrieval embeds a query).
      OLLAMA_NUM_PARALLEL: "2",
    },
  });

  try {
    await waitForOllama(server, url, models, modelsDir, options.timeoutMs ?? 60_000);
  } catch (error) {
    await server.stop();
    const reason = error instanceof Error ? error.message : String(error);
    throw new Error(`${reason}\n--- ${server.logFile} (tail) ---\n${server.logTail(15)}`);
  }

  return {
    endpoints: { url, embedModel: models.embedModel, chatModel: models.chatModel },
    processes: [server],
    stop: () => server.stop(),
  };
}

async function waitForOllama(
  server: ManagedProcess,
  url: string,
  models: TestbedModels,
  modelsDir: string,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  await waitFor(() => httpReady(`${url}/api/version`), {
    what: `ollama at ${url}`,
    timeoutMs,
    abortIf: server.exitReason,
  });
  const tags = (await (await fetch(`${url}/api/tags`)).json()) as { models?: { name: string }[] };
  const missing = missingModels(
    (tags.models ?? []).map((model) => model.name),
    [models.embedModel, models.chatModel, models.fewshotModel],
  );
  if (missing.length > 0) {
    throw new Error(`models missing from ${modelsDir}: ${missing.join(", ")}; ${installHint}`);
  }
  // An empty embed input and a prompt-less generate load a model without computing anything.
  await Promise.all([
    load(`${url}/api/embed`, { model: models.embedModel, input: [], keep_alive: -1 }, deadline),
    load(`${url}/api/generate`, { model: models.chatModel, keep_alive: -1 }, deadline),
  ]);
}

async function load(endpoint: string, body: object, deadline: number): Promise<void> {
  const response = await fetch(endpoint, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(Math.max(deadline - Date.now(), 1_000)),
  });
  if (!response.ok) {
    throw new Error(`loading ${JSON.stringify(body)} failed: ${response.status} ${await response.text()}`);
  }
  await response.body?.cancel();
}

/**
 * `ollama serve` from the test bed's build over a models directory of its own, empty or left by an earlier one, for
 * tests that pull into it (`port` to come back where a stopped one was). It prunes its directory at start (blobs
 * no manifest names; partial downloads older than an hour): never give it a shared one.
 */
export async function startPrivateOllama(
  modelsDir: string,
  port?: number,
): Promise<{ url: string; server: ManagedProcess }> {
  const binary = binPath("ollama");
  if (!existsSync(binary)) throw new Error(`ollama is not installed at ${binary}: ${installHint}`);
  const listenPort = port ?? (await freePort());
  const url = `http://127.0.0.1:${listenPort}`;
  const server = spawnService({
    name: `ollama-private-${listenPort}`,
    command: binary,
    args: ["serve"],
    env: {
      ...process.env,
      HOME: modelsDir,
      OLLAMA_HOST: `127.0.0.1:${listenPort}`,
      OLLAMA_MODELS: modelsDir,
      OLLAMA_NO_CLOUD: "1",
    },
  });
  try {
    await waitFor(() => httpReady(`${url}/api/version`), {
      what: `a private ollama at ${url}`,
      timeoutMs: 30_000,
      abortIf: server.exitReason,
    });
  } catch (error) {
    await server.stop();
    throw error;
  }
  return { url, server };
}
