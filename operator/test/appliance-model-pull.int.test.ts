// REMRAM_TESTBED=kubernetes,ollama,registry: an appliance whose models Ollama does not have yet. The operator
// (outside the cluster, its Ollama URL pointed at a real Ollama with an empty models directory of its own) pulls
// them from a registry whose blob downloads are paced, writes their progress into the appliance's status every
// few seconds, survives its own restart mid-pull with the bytes Ollama kept, and reports ModelsReady once both
// models are listed.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Watch } from "@kubernetes/client-node";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { logDir } from "../../test/harness/src/paths.js";
import type { ManagedProcess } from "../../test/harness/src/process.js";
import { createKwokNode, deleteKwokNode } from "../../test/harness/src/services/kwok-nodes.js";
import { startModelRegistry } from "../../test/harness/src/services/model-registry.js";
import { startPrivateOllama } from "../../test/harness/src/services/ollama.js";
import type { ModelRegistryEndpoints, Started } from "../../test/harness/src/services/types.js";
import { waitFor } from "../../test/harness/src/wait.js";
import type { RemramApplianceStatus } from "../src/api/v1alpha1/remram-appliance.js";
import { loadHardwareProfiles } from "../src/appliance/hardware-profiles.js";
import { modelRegistryHost } from "../src/appliance/model-puller.js";
import { defaultImages } from "../src/config.js";
import { type RunningOperator, startOperator } from "../src/operator.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import { adminClient, createNamespace, createVolumes, installCrds, runSuffix } from "./cluster.js";

const kubernetes = testbedEndpoints("kubernetes");
const ollama = testbedEndpoints("ollama");
const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `pull-${suffix}`;
const node = `kwok-pull-${suffix}`;
const appliances = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`;
/** 5 MB/s per download: the embedder (46 MB) takes about 9 s, the chat model (98 MB) about 20 s. */
const bytesPerSecond = 5_000_000;

type Appliance = KubeObject & { status?: RemramApplianceStatus };
type ModelStatus = NonNullable<RemramApplianceStatus["models"]>[number];

const modelsReady = (appliance: Appliance | undefined) =>
  appliance?.status?.conditions?.find((condition) => condition.type === "ModelsReady");
const modelEntry = (appliance: Appliance | undefined, role: ModelStatus["role"]) =>
  appliance?.status?.models?.find((model) => model.role === role);

describe("an appliance pulling its models", () => {
  const modelsDir = mkdtempSync(join(tmpdir(), "remram-ollama-appliance-"));
  let registry: Started<ModelRegistryEndpoints>;
  let target: { url: string; server: ManagedProcess };
  let operator: RunningOperator | undefined;
  /** Every version of the appliance the API server sent to a watch: one per write. */
  const seen: Appliance[] = [];
  let stopWatch: (() => void) | undefined;

  const start = (generation: number) =>
    startOperator({
      kubeConfig,
      log: pino(
        { level: "warn" },
        pino.destination({ dest: join(logDir, `operator-pull-${suffix}.log`), sync: true }),
      ),
      identity: `test-operator-pull-${suffix}-${generation}`,
      leaseNamespace: namespace,
      images: defaultImages,
      profiles: loadHardwareProfiles(join(import.meta.dirname, "../../hardware-profiles")),
      probePort: 0,
      resyncMs: 60_000,
      watchNamespaces: [namespace],
      ollamaUrl: () => target.url,
    });

  beforeAll(async () => {
    [registry, target] = await Promise.all([
      startModelRegistry({ ollama, blobBytesPerSecond: bytesPerSecond }),
      startPrivateOllama(modelsDir),
    ]);
    await installCrds(client);
    await createNamespace(client, namespace);
    await createVolumes(client, `pv-pull-${suffix}`, namespace, "box");
    await createKwokNode(kubernetes, { name: node, cpu: "32", memory: "128Gi" });
    // Every status write the operators make. A watch opened just after the CRD was installed can end at once
    // (the API server serves the new kind a moment after it is Established): it is opened again until stopped.
    let stopped = false;
    let request: AbortController | undefined;
    const watchAppliances = async (): Promise<void> => {
      request = await new Watch(kubeConfig).watch(
        appliances,
        {},
        (_type, object: Appliance) => seen.push(object),
        () => {
          if (!stopped) setTimeout(() => void watchAppliances(), 200);
        },
      );
    };
    await watchAppliances();
    stopWatch = () => {
      stopped = true;
      request?.abort();
    };
  });

  afterAll(async () => {
    stopWatch?.();
    await operator?.stop();
    await deleteKwokNode(kubernetes, node).catch(() => {});
    await client.delete(`/api/v1/namespaces/${namespace}`);
    await target?.server.stop();
    await registry?.stop();
    rmSync(modelsDir, { recursive: true, force: true });
  });

  it("writes the pulls' progress into its status, resumes after an operator restart, and ends ModelsReady", async () => {
    const { chatModel, embedModel } = registry.endpoints;
    operator = await start(1);
    await waitFor(async () => (operator?.isLeader() ? true : undefined), {
      what: "leadership",
      timeoutMs: 30_000,
    });
    await client.create(appliances, {
      apiVersion: "remram.io/v1alpha1",
      kind: "RemramAppliance",
      metadata: { name: "box", namespace },
      spec: {
        ollama: {
          models: { routing: chatModel, reflection: chatModel, embedding: embedModel },
          insecureRegistries: [modelRegistryHost(embedModel)],
        },
      },
    });
    const path = `${appliances}/box`;
    const embedding = (appliance: Appliance | undefined) => modelEntry(appliance, "embedding")?.pull;

    // Part-way: the status names bytes and a percentage for the embedder.
    const partWay = await waitFor(
      async () => {
        const appliance = await client.get<Appliance>(path);
        return (embedding(appliance)?.completedBytes ?? 0) >= 10_000_000 ? appliance : undefined;
      },
      {
        what: "the embedder's pull past 10 MB in the appliance's status",
        timeoutMs: 120_000,
        intervalMs: 200,
      },
    );
    const before = embedding(partWay);
    expect(before).toMatchObject({ status: "downloading" });
    expect(before?.completedBytes).toBeLessThan(before?.totalBytes ?? 0);
    expect(modelsReady(partWay)).toMatchObject({ status: "Unknown", reason: "ModelsPulling" });
    expect(modelsReady(partWay)?.message).toMatch(
      new RegExp(`${embedModel.replaceAll(".", "\\.")} \\d+% \\(\\d[\\d.]* MB of 45 MB\\)`),
    );

    // The operator restarts: the old one closes its streams, a new one takes the Lease and pulls again.
    await operator.stop();
    const restartedAt = Date.now();
    const writesBeforeRestart = seen.length;
    operator = await start(2);
    await waitFor(async () => (operator?.isLeader() ? true : undefined), {
      what: "leadership",
      timeoutMs: 60_000,
    });

    const ready = await waitFor(
      async () => {
        const appliance = await client.get<Appliance>(path);
        return modelsReady(appliance)?.status === "True" ? appliance : undefined;
      },
      { what: "ModelsReady=True", timeoutMs: 180_000, intervalMs: 500 },
    );
    const pullMs = Date.now() - restartedAt;
    // The new operator's first figure with bytes already counts what the old one's pull had fetched.
    const resumed = seen
      .slice(writesBeforeRestart)
      .map((appliance) => embedding(appliance))
      .find((pull) => (pull?.totalBytes ?? 0) > 0);
    expect(resumed?.completedBytes).toBeGreaterThanOrEqual(before?.completedBytes ?? 0);

    // Done: every model listed with its digest, no pull left in the status.
    for (const role of ["routing", "reflection", "embedding"] as const) {
      const entry = modelEntry(ready, role);
      expect(entry?.digest).toMatch(/^[0-9a-f]{64}$/);
      expect(entry?.pulledAt).toBeDefined();
      expect(entry?.pull).toBeUndefined();
    }
    expect(modelsReady(ready)).toMatchObject({ reason: "ModelsListed" });

    // Throttled: the status was written a few times a pull, not for each of Ollama's ~16 lines a second.
    const pullWrites = seen.filter((appliance) =>
      appliance.status?.models?.some((model) => model.pull !== undefined),
    );
    const messages = [...new Set(pullWrites.map((appliance) => modelsReady(appliance)?.message))];
    console.info(
      JSON.stringify({
        before,
        resumed,
        pullMsAfterRestart: pullMs,
        statusWritesWithPulls: pullWrites.length,
        allWrites: seen.length,
        messages,
      }),
    );
    expect(pullWrites.length).toBeLessThan(40);
  });
});
