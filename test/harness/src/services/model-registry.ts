/**
 * The test bed's model registry: the CNCF distribution registry (hack/install-registry.sh) holding the test-bed
 * models, pushed from a running Ollama, so `ollama pull` can be exercised offline exactly as against a real
 * registry. Ollama downloads a blob only through the redirect a registry answers with (and only when it leads to
 * another host), in Range requests; so the registry runs with its `redirect` storage middleware and a static
 * server with Range support (blob-server.ts) serves its storage directory on a second port. docs/testbed-models.md.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { binPath, runDir } from "../paths.js";
import { assertPortFree, freePort } from "../ports.js";
import { isAlive, type ManagedProcess, spawnService } from "../process.js";
import { readVersionsEnv } from "../versions.js";
import { httpReady, waitFor } from "../wait.js";
import { pinnedModelNames } from "./ollama.js";
import { pushModel } from "./ollama-transfer.js";
import type {
  ModelRegistryEndpoints,
  OllamaEndpoints,
  Started,
  StartOptions,
  TestbedModels,
} from "./types.js";

const installHint = "run `bash hack/install-registry.sh` (or `make setup`)";
const blobServerScript = join(dirname(fileURLToPath(import.meta.url)), "blob-server.ts");
const instancePrefix = "registry-";

export interface StartModelRegistryOptions extends StartOptions {
  /** The running Ollama whose test-bed models are pushed into the registry (the test bed's own). */
  ollama: OllamaEndpoints;
  /**
   * Address the registry and the blob server listen on; default 127.0.0.1. Pods on the real node would reach the
   * host at its veth address, 10.199.0.1.
   */
  listenAddress?: string;
  /** Host name in the model references pullers use; default the listen address (127.0.0.1 for 0.0.0.0). */
  referenceHost?: string;
  /** Host name blob downloads are redirected to; must differ from referenceHost. Default "localhost". */
  blobHost?: string;
  /** Fixed ports (a clear error if taken); free ones by default. */
  port?: number;
  blobPort?: number;
  /** Pace each blob download to this many bytes a second, so a test can stop a pull part-way; unpaced by default. */
  blobBytesPerSecond?: number;
}

/** Everything a registry instance is started with, derived from the options alone (see planModelRegistry). */
export interface ModelRegistryPlan {
  endpoints: ModelRegistryEndpoints;
  /** The registry API as this process reaches it (readiness, pushes): the listen address, or 127.0.0.1 for 0.0.0.0. */
  localUrl: string;
  localBlobUrl: string;
  /** The names the test-bed models are pushed under from this process, and their local Ollama names. */
  pushes: { source: string; destination: string }[];
  /** The registry's configuration file (JSON is YAML to the registry). */
  config: RegistryConfig;
}

export interface RegistryConfig {
  version: string;
  log: { level: string; formatter: string; accesslog: { disabled: boolean } };
  storage: { filesystem: { rootdirectory: string }; maintenance: { uploadpurging: { enabled: boolean } } };
  http: { addr: string };
  middleware: { storage: { name: "redirect"; options: { baseurl: string } }[] };
}

export interface PlanInput {
  listenAddress: string;
  referenceHost: string;
  blobHost: string;
  port: number;
  blobPort: number;
  storageDir: string;
  /** Local Ollama model names ("name" or "name:tag"). */
  models: TestbedModels;
}

/** Ports, URLs, model references and the registry configuration of one instance; throws on unusable hosts. */
export function planModelRegistry(input: PlanInput): ModelRegistryPlan {
  if (input.referenceHost === input.blobHost) {
    throw new Error(
      `the blob host must differ from the reference host (both are ${input.blobHost}): Ollama treats a blob ` +
        "response as a redirect only when it leads to another host, and fails with 'no Location header' otherwise",
    );
  }
  const localHost = input.listenAddress === "0.0.0.0" ? "127.0.0.1" : input.listenAddress;
  const blobUrl = `http://${hostPort(input.blobHost, input.blobPort)}/`;
  const repository = (model: string): string => `library/${model.includes(":") ? model : `${model}:latest`}`;
  const reference = (host: string, model: string): string =>
    `${hostPort(host, input.port)}/${repository(model)}`;
  return {
    endpoints: {
      url: `http://${hostPort(input.referenceHost, input.port)}`,
      blobUrl,
      embedModel: reference(input.referenceHost, input.models.embedModel),
      chatModel: reference(input.referenceHost, input.models.chatModel),
      fewshotModel: reference(input.referenceHost, input.models.fewshotModel),
    },
    localUrl: `http://${hostPort(localHost, input.port)}`,
    localBlobUrl: `http://${hostPort(localHost, input.blobPort)}/`,
    pushes: [input.models.embedModel, input.models.chatModel, input.models.fewshotModel].map((model) => ({
      source: model,
      destination: reference(localHost, model),
    })),
    config: {
      version: "0.1",
      // One access-log line per request; the per-request info lines would repeat each at five times the length.
      log: { level: "warn", formatter: "text", accesslog: { disabled: false } },
      storage: {
        filesystem: { rootdirectory: input.storageDir },
        // Upload purging walks the storage on a timer; nothing here leaves uploads behind.
        maintenance: { uploadpurging: { enabled: false } },
      },
      http: { addr: hostPort(input.listenAddress, input.port) },
      // Blob GETs answer 307 to the same path under the blob server, which serves the storage directory.
      middleware: { storage: [{ name: "redirect", options: { baseurl: blobUrl } }] },
    },
  };
}

const hostPort = (host: string, port: number): string =>
  host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;

/**
 * Start the registry and its blob server on `listenAddress`, and push the test-bed models into it from
 * `options.ollama`. Resolves once every test-bed model is in the registry.
 */
export async function startModelRegistry(
  options: StartModelRegistryOptions,
): Promise<Started<ModelRegistryEndpoints>> {
  const binary = binPath("registry");
  if (!existsSync(binary)) throw new Error(`the registry is not installed at ${binary}: ${installHint}`);
  const listenAddress = options.listenAddress ?? "127.0.0.1";
  const [port, blobPort] = await Promise.all([
    pickPort(listenAddress, options.port, "the model registry"),
    pickPort(listenAddress, options.blobPort, "the model registry's blob server"),
  ]);
  removeStaleInstances();
  const dir = join(runDir, `${instancePrefix}${port}`);
  const storageDir = join(dir, "storage");
  const plan = planModelRegistry({
    listenAddress,
    referenceHost: options.referenceHost ?? (listenAddress === "0.0.0.0" ? "127.0.0.1" : listenAddress),
    blobHost: options.blobHost ?? "localhost",
    port,
    blobPort,
    storageDir,
    models: pinnedModelNames(readVersionsEnv()),
  });
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(storageDir, { recursive: true });
  writeFileSync(join(dir, "owner.pid"), `${process.pid}\n`);
  const configFile = join(dir, "config.yml");
  writeFileSync(configFile, `${JSON.stringify(plan.config, null, 2)}\n`);

  const blobServer = spawnService({
    name: `registry-blobs-${blobPort}`,
    command: process.execPath,
    args: [
      blobServerScript,
      ...["--root", storageDir, "--host", listenAddress, "--port", String(blobPort)],
      ...(options.blobBytesPerSecond !== undefined
        ? ["--bytes-per-second", String(options.blobBytesPerSecond)]
        : []),
    ],
    detach: options.detach,
  });
  const registry = spawnService({
    name: `registry-${port}`,
    command: binary,
    args: ["serve", configFile],
    detach: options.detach,
    // The registry's tracing otherwise tries to export to a collector and logs a failure every 5 s.
    env: { ...process.env, OTEL_TRACES_EXPORTER: "none" },
  });
  writeFileSync(join(dir, "servers.pid"), `${registry.pid}\n${blobServer.pid}\n`);
  const processes = [registry, blobServer];
  const stop = async (): Promise<void> => {
    await Promise.all(processes.map((server) => server.stop()));
    if (!options.detach) rmSync(dir, { recursive: true, force: true });
  };

  const timeoutMs = options.timeoutMs ?? 120_000;
  try {
    await Promise.all([
      waitFor(() => httpReady(`${plan.localUrl}/v2/`), {
        what: `the model registry at ${plan.localUrl}`,
        timeoutMs: 30_000,
        abortIf: () => exitedWhy(registry, port),
      }),
      // Any answer will do: the storage directory is still empty, so every path is a 403 or 404.
      waitFor(() => httpReady(plan.localBlobUrl, (response) => response.status < 500), {
        what: `the registry's blob server at ${plan.localBlobUrl}`,
        timeoutMs: 30_000,
        abortIf: () => exitedWhy(blobServer, blobPort),
      }),
    ]);
  } catch (error) {
    await stop();
    throw new Error(`${reason(error)}\n${processes.map(logSection).join("\n")}`);
  }
  try {
    await seed(options.ollama.url, plan.pushes, timeoutMs);
  } catch (error) {
    await stop();
    throw new Error(`seeding the model registry failed: ${reason(error)}\n${logSection(registry)}`);
  }
  return { endpoints: plan.endpoints, processes, stop };
}

/** A fixed port if it is free (a clear error naming it if not), else a free one. */
async function pickPort(listenAddress: string, fixed: number | undefined, what: string): Promise<number> {
  if (fixed === undefined) return freePort(listenAddress === "0.0.0.0" ? "127.0.0.1" : listenAddress);
  await assertPortFree(listenAddress, fixed, what);
  return fixed;
}

/** Why a server is gone, with the port named when it could not bind it (another process took it meanwhile). */
function exitedWhy(server: ManagedProcess, port: number): string | undefined {
  const ended = server.exitReason();
  if (ended === undefined) return undefined;
  return /address already in use/i.test(server.logTail(10)) ? `port ${port} is in use (${ended})` : ended;
}

/**
 * Push each model under its registry name: Ollama pushes only models named after their registry, so each gets a
 * second name first (/api/copy writes one small manifest, the blobs are shared) that is deleted afterwards; the
 * delete keeps every blob another manifest still uses, so the test-bed models stay intact. One at a time: two
 * models share SmolLM2's weights, and two pushes uploading that blob at once ended with a manifest the registry
 * refused (MANIFEST_BLOB_UNKNOWN).
 */
async function seed(
  ollamaUrl: string,
  pushes: readonly { source: string; destination: string }[],
  timeoutMs: number,
): Promise<void> {
  for (const { source, destination } of pushes) {
    await ollamaRequest(ollamaUrl, "POST", "copy", { source, destination });
    try {
      await pushModel({ ollamaUrl, model: destination, timeoutMs });
    } finally {
      await ollamaRequest(ollamaUrl, "DELETE", "delete", { model: destination });
    }
  }
}

async function ollamaRequest(ollamaUrl: string, method: string, api: string, body: object): Promise<void> {
  const response = await fetch(`${ollamaUrl}/api/${api}`, {
    method,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  if (!response.ok) {
    throw new Error(
      `${method} /api/${api} ${JSON.stringify(body)}: HTTP ${response.status} ${await response.text()}`,
    );
  }
  await response.body?.cancel();
}

/**
 * Remove the instance directories of earlier runs (each holds a copy of the models): one is stale when neither
 * the process that created it nor its servers are alive.
 */
function removeStaleInstances(): void {
  let entries: string[];
  try {
    entries = readdirSync(runDir).filter((entry) => entry.startsWith(instancePrefix));
  } catch {
    return;
  }
  for (const entry of entries) {
    const pids = ["owner.pid", "servers.pid"].flatMap((name) => readPids(join(runDir, entry, name)));
    if (!pids.some(isAlive)) rmSync(join(runDir, entry), { recursive: true, force: true });
  }
}

function readPids(path: string): number[] {
  try {
    return readFileSync(path, "utf8")
      .split("\n")
      .map((line) => Number.parseInt(line, 10))
      .filter((pid) => Number.isInteger(pid) && pid > 1);
  } catch {
    return [];
  }
}

const reason = (error: unknown): string => (error instanceof Error ? error.message : String(error));
const logSection = (server: ManagedProcess): string =>
  `--- ${server.logFile} (tail) ---\n${server.logTail(15)}`;
