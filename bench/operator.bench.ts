/**
 * The operator as its container runs it (operator/src/main.ts, a separate process) against the test bed's real
 * kube-apiserver with kwok nodes and the real Ollama: time from creating a RemramAppliance to Ready, API writes and
 * reconciles during an idle window (goal: zero writes; resyncs every 20 s so the window sees real reconciles),
 * the process's RSS, and workqueue latency from its /metrics. Writes bench/results/operator.json.
 * Appliances: BENCH_OPERATOR_APPLIANCES (default 3), idle window BENCH_OPERATOR_IDLE_SECONDS (default 60).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { KubeConfig } from "@kubernetes/client-node";
import { freePort, startKubernetes, startOllama } from "@remram/test-harness";
import { KubeClient, type KubeObject } from "../operator/src/runtime/kube-client.js";
import { createNamespace, createVolumes, installCrds } from "../operator/test/cluster.js";
import { spawnService } from "../test/harness/src/process.js";
import { createKwokNode } from "../test/harness/src/services/kwok-nodes.js";
import { httpReady, waitFor } from "../test/harness/src/wait.js";

const appliances = Number(process.env.BENCH_OPERATOR_APPLIANCES ?? 3);
const idleSeconds = Number(process.env.BENCH_OPERATOR_IDLE_SECONDS ?? 60);
const benchDir = dirname(fileURLToPath(import.meta.url));
const repoRoot = join(benchDir, "..");

/** Prometheus text → samples keyed by "name{labels}". */
function parseMetrics(text: string): Map<string, number> {
  const samples = new Map<string, number>();
  for (const line of text.split("\n")) {
    if (line.startsWith("#") || line.trim() === "") continue;
    const space = line.lastIndexOf(" ");
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

function sumWhere(samples: Map<string, number>, test: (key: string) => boolean): number {
  let sum = 0;
  for (const [key, value] of samples) if (test(key)) sum += value;
  return sum;
}

/** An upper bound of the q-quantile from cumulative histogram buckets. */
function histogramQuantile(samples: Map<string, number>, name: string, q: number): number | null {
  const buckets = [...samples]
    .filter(([key]) => key.startsWith(`${name}_bucket{`))
    .map(([key, count]) => {
      const le = /le="([^"]+)"/.exec(key)?.[1] ?? "NaN";
      return { le: le === "+Inf" ? Number.POSITIVE_INFINITY : Number(le), count };
    })
    .filter((bucket) => !Number.isNaN(bucket.le));
  const byLe = new Map<number, number>();
  for (const bucket of buckets) byLe.set(bucket.le, (byLe.get(bucket.le) ?? 0) + bucket.count);
  const sorted = [...byLe].sort((a, b) => a[0] - b[0]);
  const total = sorted.at(-1)?.[1] ?? 0;
  if (total === 0) return null;
  return sorted.find(([, count]) => count >= q * total)?.[0] ?? null;
}

/** resourceVersion of every object the operator owns or writes status on, in the bench namespaces. */
async function ownedVersions(
  client: KubeClient,
  namespaces: readonly string[],
): Promise<Map<string, string>> {
  const kinds = [
    "/apis/apps/v1/namespaces/NS/deployments",
    "/apis/apps/v1/namespaces/NS/statefulsets",
    "/api/v1/namespaces/NS/services",
    "/api/v1/namespaces/NS/secrets",
    "/api/v1/namespaces/NS/configmaps",
    "/api/v1/namespaces/NS/persistentvolumeclaims",
    "/apis/remram.io/v1alpha1/namespaces/NS/remramappliances",
  ];
  const versions = new Map<string, string>();
  for (const namespace of namespaces) {
    for (const kind of kinds) {
      const path = kind.replace("NS", namespace);
      const list = await client.get<{ items: KubeObject[] }>(path);
      for (const item of list?.items ?? []) {
        versions.set(`${path}/${item.metadata.name}`, item.metadata.resourceVersion ?? "");
      }
    }
  }
  return versions;
}

function rssMiB(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((entry) => entry.startsWith("VmRSS:"));
  return Math.round(Number(line?.replace(/\D+/g, "") ?? 0) / 1024);
}

const kubernetes = await startKubernetes();
const ollama = await startOllama();
try {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubernetes.endpoints.kubeconfig);
  const client = new KubeClient(kubeConfig);
  await installCrds(client);
  await createKwokNode(kubernetes.endpoints, { name: "bench-node", cpu: "64", memory: "256Gi" });
  await createNamespace(client, "remram-system");
  const namespaces = Array.from({ length: appliances }, (_, index) => `bench-${index}`);
  for (const namespace of namespaces) {
    await createNamespace(client, namespace);
    await createVolumes(client, `bench-volume-${namespace}`, namespace, "box");
  }

  const probePort = await freePort();
  const operator = spawnService({
    name: `operator-bench-${probePort}`,
    command: process.execPath,
    args: ["--import", "tsx", join(repoRoot, "operator/src/main.ts")],
    cwd: repoRoot,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KUBECONFIG: kubernetes.endpoints.kubeconfig,
      POD_NAME: "remram-operator-bench",
      POD_NAMESPACE: "remram-system",
      REMRAM_WATCH_NAMESPACES: namespaces.join(","),
      REMRAM_PROBE_PORT: String(probePort),
      REMRAM_RESYNC_SECONDS: "20",
      REMRAM_OUT_OF_CLUSTER_OLLAMA_URL: ollama.endpoints.url,
      LOG_LEVEL: "warn",
    },
  });
  const metricsUrl = `http://127.0.0.1:${probePort}/metrics`;
  await waitFor(() => httpReady(`http://127.0.0.1:${probePort}/readyz`), {
    what: "operator ready",
    timeoutMs: 60_000,
    abortIf: () => operator.exitReason(),
  });

  const applyToReadyMs: number[] = [];
  for (const namespace of namespaces) {
    const started = performance.now();
    await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "RemramAppliance",
      metadata: { name: "box", namespace },
      spec: {
        ollama: {
          models: {
            routing: ollama.endpoints.chatModel,
            reflection: ollama.endpoints.chatModel,
            embedding: ollama.endpoints.embedModel,
          },
        },
      },
    });
    await waitFor(
      async () => {
        const appliance = await client.get<
          KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
        >(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/box`);
        return appliance?.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True")
          ? true
          : undefined;
      },
      { what: `appliance in ${namespace} Ready`, timeoutMs: 180_000, intervalMs: 100 },
    );
    applyToReadyMs.push(Math.round(performance.now() - started));
  }

  // Let the last rollouts settle, then watch an idle window.
  await new Promise((resolve) => setTimeout(resolve, 10_000));
  const isWrite = (key: string) =>
    key.startsWith("rest_client_requests_total{") && !/method="(GET|LIST|WATCH)"/.test(key);
  const isReconcile = (key: string) => key.startsWith("controller_runtime_reconcile_total{");
  const before = parseMetrics(await (await fetch(metricsUrl)).text());
  const versionsBefore = await ownedVersions(client, namespaces);
  await new Promise((resolve) => setTimeout(resolve, idleSeconds * 1000));
  const after = parseMetrics(await (await fetch(metricsUrl)).text());
  const versionsAfter = await ownedVersions(client, namespaces);
  const changedObjects = [...versionsAfter].filter(([key, version]) => versionsBefore.get(key) !== version);
  const delta = (test: (key: string) => boolean) => sumWhere(after, test) - sumWhere(before, test);
  const writesByMethod: Record<string, number> = {};
  for (const [key, value] of after) {
    if (!isWrite(key)) continue;
    const method = /method="([^"]+)"/.exec(key)?.[1] ?? "?";
    writesByMethod[method] = (writesByMethod[method] ?? 0) + value - (before.get(key) ?? 0);
  }
  const queueSum = sumWhere(after, (key) => key.startsWith("workqueue_queue_duration_seconds_sum"));
  const queueCount = sumWhere(after, (key) => key.startsWith("workqueue_queue_duration_seconds_count"));
  const results = {
    benchmark: "operator",
    finishedAt: new Date().toISOString(),
    appliances,
    applyToReadyMs,
    idleWindow: {
      seconds: idleSeconds,
      resyncSeconds: 20,
      reconciles: delta(isReconcile),
      // Owned objects and appliance status whose resourceVersion moved: what "zero writes when converged" means.
      ownedObjectsWritten: changedObjects.length,
      ownedObjectsChecked: versionsAfter.size,
      goalOwnedObjectsWritten: 0,
      // Every request that is not a read, Lease renewals included (one PUT per 2 s retry period by design).
      apiWrites: delta(isWrite),
      writesByMethod,
    },
    operatorRssMiB: rssMiB(operator.pid),
    workqueue: {
      items: queueCount,
      meanQueueMs: queueCount === 0 ? null : Math.round((queueSum / queueCount) * 1000 * 100) / 100,
      p95QueueSecondsUpperBound: histogramQuantile(after, "workqueue_queue_duration_seconds", 0.95),
      p95WorkSecondsUpperBound: histogramQuantile(after, "workqueue_work_duration_seconds", 0.95),
    },
  };
  writeFileSync(join(benchDir, "results", "operator.json"), `${JSON.stringify(results, null, 2)}\n`);
  console.log(JSON.stringify(results));
  await operator.stop();
} finally {
  await ollama.stop();
  await kubernetes.stop();
}
