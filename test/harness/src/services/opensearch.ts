import { execFileSync, spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { cacheDir, runDir } from "../paths.js";
import { freePort } from "../ports.js";
import { isAlive, type ManagedProcess, spawnService } from "../process.js";
import { pinned, readVersionsEnv } from "../versions.js";
import { httpReady, waitFor } from "../wait.js";
import type { OpenSearchEndpoints, Started, StartOptions } from "./types.js";

const installHint = "run `bash hack/install-opensearch.sh` (or `make setup`)";

/** An installation made by hack/install-opensearch.sh. */
export interface OpenSearchInstallation {
  home: string;
  /** A JDK the installer found to work (OpenSearch 2.x needs one with the Security Manager: 11 to 23). */
  javaHome: string;
  /** The user the node must run as: OpenSearch refuses root, so as root the installer made a system user. */
  runAs: string;
}

/** The settings one node gets in its own opensearch.yml. */
export interface NodeSettings {
  httpPort: number;
  transportPort: number;
  dataDir: string;
  logsDir: string;
  /** path.repo: shared-filesystem snapshot repositories may live under it (the move to an external cluster). */
  snapshotsDir: string;
}

/** The OpenSearch version pinned in hack/versions.env, so the installer and the harness agree on the directory. */
export function pinnedOpenSearchVersion(versionsEnv: string): string {
  return pinned("OPENSEARCH_VERSION", versionsEnv);
}

/** Parse the remram.env the installer writes beside the installation. */
export function parseInstallationEnv(home: string, text: string): OpenSearchInstallation {
  const value = (key: string): string => {
    const match = new RegExp(`^${key}=(.+)$`, "m").exec(text);
    if (!match?.[1]) throw new Error(`${join(home, "remram.env")} has no ${key}; ${installHint}`);
    return match[1].trim();
  };
  return { home, javaHome: value("OPENSEARCH_JAVA_HOME"), runAs: value("OPENSEARCH_RUN_AS") };
}

/** opensearch.yml for a single-node test cluster on loopback. */
export function renderNodeConfig(settings: NodeSettings): string {
  return `${[
    "cluster.name: remram-testbed",
    "node.name: remram-testbed",
    // No discovery, no bootstrap checks: loopback only.
    "discovery.type: single-node",
    "network.host: 127.0.0.1",
    `http.port: ${settings.httpPort}`,
    `transport.port: ${settings.transportPort}`,
    `path.data: ${settings.dataDir}`,
    `path.logs: ${settings.logsDir}`,
    `path.repo: ${settings.snapshotsDir}`,
    // Test machines often have disks over the 85 % watermark, which would leave new shards unassigned.
    "cluster.routing.allocation.disk.threshold_enabled: false",
  ].join("\n")}\n`;
}

/**
 * The installation's jvm.options for one node: the GC log, heap dumps and JVM crash logs go to the node's own
 * dirs. The defaults are relative, and bin/opensearch-env changes into the installation, so every node would
 * otherwise write into one shared logs/ there.
 */
export function renderJvmOptions(installationJvmOptions: string, settings: NodeSettings): string {
  return installationJvmOptions
    .replaceAll("file=logs/", `file=${settings.logsDir}/`)
    .replaceAll("-Xloggc:logs/", `-Xloggc:${settings.logsDir}/`)
    .replaceAll("-XX:ErrorFile=logs/", `-XX:ErrorFile=${settings.logsDir}/`)
    .replace(/^-XX:HeapDumpPath=data$/m, `-XX:HeapDumpPath=${settings.dataDir}`);
}

/** A command line that runs `argv` as `user` (needs root). setpriv execs, so the PID stays the command's own. */
export function asUser(user: string, argv: readonly string[]): { command: string; args: string[] } {
  return { command: "setpriv", args: [`--reuid=${user}`, `--regid=${user}`, "--init-groups", "--", ...argv] };
}

/**
 * The command line that starts the node, which writes its PID to `pidFile` (and removes it on shutdown); as root,
 * as the installer's user (its JVM then leads the process group).
 */
export function launchCommand(
  installation: OpenSearchInstallation,
  runningAsRoot: boolean,
  pidFile: string,
): { command: string; args: string[] } {
  const script = join(installation.home, "bin", "opensearch");
  const args = ["-p", pidFile];
  return runningAsRoot ? asUser(installation.runAs, [script, ...args]) : { command: script, args };
}

/** Whether a node failed because another process took its port between freePort() and the bind. */
export function lostPortRace(log: string): boolean {
  return /BindException|BindTransportException|Address already in use/.test(log);
}

/** An installation in the cache: the plain one, or `-security` (hack/install-opensearch-security.sh). */
export function readInstallation(variant: "" | "-security" = ""): OpenSearchInstallation {
  const version = pinnedOpenSearchVersion(readVersionsEnv());
  const installed = join(cacheDir, `opensearch-${version}${variant}`);
  if (!existsSync(join(installed, "remram.env"))) {
    const hint =
      variant === "" ? installHint : "run `bash hack/install-opensearch-security.sh` (or `make setup`)";
    throw new Error(`OpenSearch ${version}${variant} is not installed at ${installed}: ${hint}`);
  }
  // The cache entry may be a link into the service user's home; that user can only use the real path.
  const home = realpathSync(installed);
  return parseInstallationEnv(home, readFileSync(join(home, "remram.env"), "utf8"));
}

const runningAsRoot = (): boolean => process.getuid?.() === 0;

/** Node dirs are named after their HTTP port; one is stale once the node that wrote its PID file is gone. */
const freshDirPrefix = "opensearch-";
const nodePidFile = "opensearch.pid";
const staleAfterMs = 15 * 60_000;

/**
 * Remove node dirs that no live node uses (a crashed run's leftovers). The node's own PID file inside the dir
 * decides, not .remram/pids, which `make infra-down` and others clear. A dir younger than staleAfterMs is kept:
 * a start in parallel may have created it and its JVM not yet written the PID file.
 */
function pruneStaleNodeDirs(now: number): void {
  let entries: string[];
  try {
    entries = readdirSync(runDir).filter((entry) => entry.startsWith(freshDirPrefix));
  } catch {
    return;
  }
  for (const entry of entries) {
    const dir = join(runDir, entry);
    const pid = recordedPid(join(dir, nodePidFile));
    if (pid !== undefined && isAlive(pid)) continue;
    if (now - statSync(dir).mtimeMs < staleAfterMs) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

function recordedPid(pidFile: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(pidFile, "utf8"), 10);
    return Number.isInteger(pid) && pid > 1 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What sets one kind of node apart: its installation, the settings and files it adds to its config dir
 * (certificates, users), its URL's scheme and what a healthy node answers.
 */
export interface NodeFlavor {
  installation: OpenSearchInstallation;
  /** Written into the node's config dir before it starts; returns settings appended to opensearch.yml. */
  configure?(configDir: string): string;
  scheme: "http" | "https";
  healthy(url: string): Promise<boolean>;
}

const plainHealth = async (url: string): Promise<boolean> =>
  (await httpReady(`${url}/_cluster/health?wait_for_status=yellow&timeout=2s`, (r) => r.status === 200)) !==
  undefined;

/** Config (copied from the installation, plus our opensearch.yml), data, logs and tmp of one node. */
function prepareNodeDir(flavor: NodeFlavor, nodeDir: string, settings: NodeSettings): void {
  const { installation } = flavor;
  const configDir = join(nodeDir, "config");
  rmSync(configDir, { recursive: true, force: true });
  cpSync(join(installation.home, "config"), configDir, { recursive: true });
  const extra = flavor.configure?.(configDir) ?? "";
  writeFileSync(join(configDir, "opensearch.yml"), renderNodeConfig(settings) + extra);
  const jvmOptions = join(configDir, "jvm.options");
  writeFileSync(jvmOptions, renderJvmOptions(readFileSync(jvmOptions, "utf8"), settings));
  for (const dir of [settings.dataDir, settings.logsDir, settings.snapshotsDir, join(nodeDir, "tmp")])
    mkdirSync(dir, { recursive: true });
  if (!runningAsRoot()) return;
  execFileSync("chown", ["-R", `${installation.runAs}:`, nodeDir]);
  const probe = asUser(installation.runAs, ["test", "-w", settings.dataDir]);
  if (spawnSync(probe.command, probe.args).status !== 0) {
    throw new Error(
      `user ${installation.runAs} cannot write ${settings.dataDir}: the checkout must be reachable by that user (not under a private home)`,
    );
  }
}

/**
 * A single-node OpenSearch with k-NN on free loopback ports, healthy (green or yellow) before it resolves.
 *
 * Each start gets a fresh dir .remram/run/opensearch-<http port>/ (config, data, logs), removed by stop().
 * A detached start (`make infra-up`) reuses .remram/run/opensearch/ instead, so the demo's data survives
 * `make infra-down` and the next `make infra-up`.
 */
export async function startOpenSearch(options: StartOptions = {}): Promise<Started<OpenSearchEndpoints>> {
  return startOpenSearchNode(
    { installation: readInstallation(), scheme: "http", healthy: plainHealth },
    options,
  );
}

/** A node of `flavor` on free loopback ports (see startOpenSearch), healthy before it resolves. */
export async function startOpenSearchNode(
  flavor: NodeFlavor,
  options: StartOptions = {},
): Promise<Started<OpenSearchEndpoints>> {
  pruneStaleNodeDirs(Date.now());
  const timeoutMs = options.timeoutMs ?? 120_000;
  const deadline = Date.now() + timeoutMs;
  // Another process may grab a port between freePort() and the node's bind; that is worth a retry, nothing else is.
  for (let attempt = 1; ; attempt++) {
    try {
      return await startNode(flavor, options, Math.max(deadline - Date.now(), 1_000));
    } catch (error) {
      if (!(error instanceof PortRaceError) || attempt === 3) throw error;
    }
  }
}

class PortRaceError extends Error {}

async function startNode(
  flavor: NodeFlavor,
  options: StartOptions,
  timeoutMs: number,
): Promise<Started<OpenSearchEndpoints>> {
  const { installation } = flavor;
  const httpPort = await freePort();
  let transportPort = await freePort();
  while (transportPort === httpPort) transportPort = await freePort();
  const nodeDir = join(runDir, options.detach ? "opensearch" : `${freshDirPrefix}${httpPort}`);
  const settings: NodeSettings = {
    httpPort,
    transportPort,
    dataDir: join(nodeDir, "data"),
    logsDir: join(nodeDir, "logs"),
    snapshotsDir: join(nodeDir, "snapshots"),
  };
  prepareNodeDir(flavor, nodeDir, settings);
  const { command, args } = launchCommand(installation, runningAsRoot(), join(nodeDir, nodePidFile));
  const node = spawnService({
    name: `opensearch-${httpPort}`,
    command,
    args,
    cwd: nodeDir,
    detach: options.detach,
    env: {
      PATH: process.env.PATH,
      HOME: nodeDir,
      OPENSEARCH_JAVA_HOME: installation.javaHome,
      OPENSEARCH_PATH_CONF: join(nodeDir, "config"),
      OPENSEARCH_TMPDIR: join(nodeDir, "tmp"),
      // 512 MB is plenty for test indices on a machine shared with Kubernetes, Ollama and OpenClaw. C1 only:
      // on 2 busy cores the node is healthy in about half the time (63 s -> 23-30 s) and answered a BM25 + k-NN
      // _msearch faster too (64 vs 132 ms), as C2's compiler threads no longer compete (docs/testbed-opensearch.md).
      OPENSEARCH_JAVA_OPTS: "-Xms512m -Xmx512m -XX:TieredStopAtLevel=1",
    },
  });
  const url = `${flavor.scheme}://127.0.0.1:${httpPort}`;
  const stop = async (): Promise<void> => {
    await node.stop(15_000);
    if (!options.detach) rmSync(nodeDir, { recursive: true, force: true });
  };

  try {
    await waitForHealthy(node, url, timeoutMs, flavor.healthy);
  } catch (error) {
    await stop();
    const tail = node.logTail(20);
    const reason = error instanceof Error ? error.message : String(error);
    const message = `${reason}\n--- ${node.logFile} (tail) ---\n${tail}`;
    throw lostPortRace(tail) ? new PortRaceError(message) : new Error(message);
  }
  return { endpoints: { url }, processes: [node], stop };
}

async function waitForHealthy(
  node: ManagedProcess,
  url: string,
  timeoutMs: number,
  healthy: (url: string) => Promise<boolean>,
): Promise<void> {
  await waitFor(async () => ((await healthy(url)) ? true : undefined), {
    what: `opensearch at ${url}`,
    timeoutMs,
    intervalMs: 500,
    abortIf: node.exitReason,
  });
}
