/**
 * `make infra-up` / `make demo` / `make infra-down`: run the test bed in the background for humans and scripts.
 *
 *   tsx test/harness/src/cli.ts up [--demo]   start (or report the already running) test bed, write .remram/env
 *   tsx test/harness/src/cli.ts down          stop every process recorded under .remram/pids
 */
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { envFile, logDir, pidDir, stateDir } from "./paths.js";
import { isAlive, stopAllRecorded } from "./process.js";
import { nodeLeftovers, teardownNode } from "./services/node/host.js";
import { nodeDir, nodeSysctlFile } from "./services/node/index.js";
import { podmanLeftovers, teardownPodman } from "./services/podman/host.js";
import { podmanDir } from "./services/podman/index.js";
import { renderEnvFile, renderSummary } from "./summary.js";
import { selectedServices, startTestbed, type TestbedEndpoints } from "./testbed.js";

const endpointsFile = join(stateDir, "testbed.json");

/** The endpoints of a test bed started earlier, if all of its recorded processes are still alive. */
function runningTestbed(): TestbedEndpoints | undefined {
  if (!existsSync(endpointsFile)) return undefined;
  const pids = readRecordedPids();
  if (pids.length === 0 || !pids.every(isAlive)) return undefined;
  return JSON.parse(readFileSync(endpointsFile, "utf8")) as TestbedEndpoints;
}

function readRecordedPids(): number[] {
  try {
    return readFileSync(join(stateDir, "testbed.pids"), "utf8")
      .split("\n")
      .filter((line) => line.trim() !== "")
      .map((line) => Number.parseInt(line, 10));
  } catch {
    return [];
  }
}

async function up(demo: boolean): Promise<void> {
  const existing = runningTestbed();
  if (existing) {
    console.log(`${renderSummary(existing)}\n(already running; started earlier)`);
    return;
  }
  // Leftovers of a crashed run would hold ports and data dirs.
  await stopAllRecorded();
  const services = selectedServices();
  console.log(`Starting ${services.join(", ")} on 127.0.0.1 (first start can take a minute)...`);
  const started = Date.now();
  const testbed = await startTestbed({ detach: true, services });
  mkdirSync(stateDir, { recursive: true });
  writeFileSync(endpointsFile, `${JSON.stringify(testbed.endpoints, null, 2)}\n`);
  writeFileSync(
    join(stateDir, "testbed.pids"),
    `${testbed.services.flatMap((service) => service.processes.map((process) => process.pid)).join("\n")}\n`,
  );
  writeFileSync(envFile, renderEnvFile(testbed.endpoints));
  console.log(
    `${renderSummary(testbed.endpoints)}\nReady in ${((Date.now() - started) / 1000).toFixed(1)} s.`,
  );
  if (demo) console.log("\nThis is the local test bed every integration test runs against.");
}

async function down(): Promise<void> {
  // The real node and the podman service first: their containers, mounts, namespaces and kernel settings are not
  // in the PID files. The node's namespace is one per machine: without this checkout's node state (written before
  // the namespace and removed after it), a node there is another checkout's and is left alone.
  const nodeHere = existsSync(nodeDir) || existsSync(nodeSysctlFile);
  if (nodeHere) await teardownNode(nodeDir, nodeSysctlFile);
  const podmanHere = existsSync(podmanDir);
  const podmanLeft = await teardownPodman(podmanDir);
  const stopped = [
    ...(podmanHere ? [`podman service (its containers, namespace and ${podmanDir})`] : []),
    ...(await stopAllRecorded()),
  ];
  const nodeLeft = nodeHere ? await nodeLeftovers(nodeDir, nodeSysctlFile) : [];
  if (nodeLeft.length > 0) throw new Error(`the real node left behind:\n  ${nodeLeft.join("\n  ")}`);
  const left = [...podmanLeft, ...(await podmanLeftovers(podmanDir))];
  if (left.length > 0) throw new Error(`the podman service left behind:\n  ${left.join("\n  ")}`);
  for (const file of [envFile, endpointsFile, join(stateDir, "testbed.pids")]) rmSync(file, { force: true });
  console.log(stopped.length === 0 ? "Nothing was running." : `Stopped: ${stopped.join(", ")}`);
  console.log(`(PID files: ${pidDir})`);
}

const [command, ...flags] = process.argv.slice(2);
try {
  if (command === "up") await up(flags.includes("--demo"));
  else if (command === "down") await down();
  else {
    console.error("usage: cli.ts up [--demo] | down");
    process.exitCode = 2;
  }
} catch (error) {
  console.error(error instanceof Error ? error.message : String(error));
  console.error(`Logs: ${logDir}`);
  process.exitCode = 1;
}
