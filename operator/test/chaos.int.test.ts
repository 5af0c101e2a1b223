import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { repoRoot } from "../../test/harness/src/paths.js";
import { freePort } from "../../test/harness/src/ports.js";
import { createKwokNode, deleteKwokNode } from "../../test/harness/src/services/kwok-nodes.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { loadHardwareProfiles } from "../src/appliance/hardware-profiles.js";
import { defaultImages } from "../src/config.js";
import { type RunningOperator, startOperator } from "../src/operator.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import { adminClient, createNamespace, createVolumes, installCrds, runSuffix } from "./cluster.js";

const kubernetes = testbedEndpoints("kubernetes");
const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `chaos-${suffix}`;
const node = `kwok-chaos-${suffix}`;
const expectedChildren = {
  Deployment: ["box-app", "box-cortex", "box-gateway", "box-ollama"],
  StatefulSet: ["box-opensearch"],
  Service: [
    "box-app",
    "box-cortex",
    "box-gateway",
    "box-gateway-metrics",
    "box-ollama",
    "box-opensearch",
    "box-opensearch-headless",
  ],
};
const listPaths = {
  Deployment: `/apis/apps/v1/namespaces/${namespace}/deployments`,
  StatefulSet: `/apis/apps/v1/namespaces/${namespace}/statefulsets`,
  Service: `/api/v1/namespaces/${namespace}/services`,
};

let operator: RunningOperator | undefined;
let probePort = 0;

/** The operator as its container runs it (main.ts), as a separate process that can be SIGKILLed. */
function spawnOperatorProcess(identity: string): ChildProcess {
  return spawn(process.execPath, ["--import", "tsx", join(repoRoot, "operator/src/main.ts")], {
    cwd: repoRoot,
    env: {
      ...process.env,
      KUBECONFIG: kubernetes.kubeconfig,
      POD_NAME: identity,
      POD_NAMESPACE: namespace,
      REMRAM_WATCH_NAMESPACES: namespace,
      REMRAM_PROBE_PORT: "0",
      LOG_LEVEL: "silent",
    },
    stdio: "ignore",
  });
}

async function childNames(kind: keyof typeof listPaths): Promise<string[]> {
  const list = await client.get<{ items: KubeObject[] }>(
    `${listPaths[kind]}?labelSelector=remram.io/appliance=box`,
  );
  return (list?.items ?? []).map((item) => item.metadata.name).sort();
}

beforeAll(async () => {
  await installCrds(client);
  await createNamespace(client, namespace);
  await createVolumes(client, `pv-chaos-${suffix}`, namespace, "box");
  await createKwokNode(kubernetes, { name: node, cpu: "32", memory: "128Gi" });
  await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: { ollama: { gpu: "disabled" } },
  });
});

afterAll(async () => {
  await operator?.stop();
  await deleteKwokNode(kubernetes, node).catch(() => {});
  await client.delete(`/api/v1/namespaces/${namespace}`);
});

describe("the operator under repeated kills", () => {
  it("converges with exactly one of each child after being SIGKILLed mid-reconcile three times", async () => {
    for (let round = 0; round < 3; round++) {
      const child = spawnOperatorProcess(`chaos-${suffix}-${round}`);
      // A killed leader keeps the Lease for its 15 s: the next one waits, takes over and is killed in turn.
      await sleep(round === 0 ? 6_000 : 18_000);
      child.kill("SIGKILL");
      await new Promise((resolve) => child.once("exit", resolve));
    }
    probePort = await freePort();
    operator = await startOperator({
      kubeConfig,
      log: pino({ level: "silent" }),
      identity: `chaos-${suffix}-final`,
      leaseNamespace: namespace,
      watchNamespaces: [namespace],
      images: defaultImages,
      profiles: loadHardwareProfiles(join(repoRoot, "hardware-profiles")),
      probePort,
      resyncMs: 60_000,
    });
    const running = operator;
    await waitFor(async () => (running.isLeader() ? true : undefined), {
      what: "leadership",
      timeoutMs: 40_000,
    });
    for (const kind of Object.keys(expectedChildren) as (keyof typeof expectedChildren)[]) {
      await waitFor(
        async () => ((await childNames(kind)).length === expectedChildren[kind].length ? true : undefined),
        { what: `${kind} children`, timeoutMs: 60_000, intervalMs: 500 },
      );
      expect(await childNames(kind)).toEqual(expectedChildren[kind]);
    }
  });

  it("then stays quiet: no writes and no hot loop while nothing changes", async () => {
    const running = operator as RunningOperator;
    await sleep(5_000);
    const writes = running.client.totalWrites();
    const reconciles = async () =>
      (await running.metrics.reconcileTotal.get()).values
        .filter((value) => value.labels.controller === "appliance")
        .reduce((sum, value) => sum + value.value, 0);
    const before = await reconciles();
    await sleep(20_000);
    expect(running.client.totalWrites()).toBe(writes);
    // Not Ready (nothing reaches Ollama from here), so it looks again every 15 s: a handful, not a loop.
    expect((await reconciles()) - before).toBeLessThanOrEqual(4);
  });

  it("serves /healthz, /readyz (caches synced, CRDs at the generated revision) and controller-runtime metrics", async () => {
    const base = `http://127.0.0.1:${probePort}`;
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status, await ready.clone().text()).toBe(200);
    const metrics = await (await fetch(`${base}/metrics`)).text();
    for (const name of [
      "controller_runtime_reconcile_total",
      "controller_runtime_reconcile_time_seconds_bucket",
      "workqueue_depth",
      "workqueue_adds_total",
      "rest_client_requests_total",
      'leader_election_master_status{name="remram-operator"} 1',
    ]) {
      expect(metrics).toContain(name);
    }
  });
});
