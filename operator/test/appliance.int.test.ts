import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, logDir } from "../../test/harness/src/paths.js";
import { createKwokNode, deleteKwokNode } from "../../test/harness/src/services/kwok-nodes.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { loadHardwareProfiles } from "../src/appliance/hardware-profiles.js";
import { defaultImages } from "../src/config.js";
import { type OperatorOptions, type RunningOperator, startOperator } from "../src/operator.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import {
  adminClient,
  createNamespace,
  createVolumes,
  getStatusCondition,
  installCrds,
  runSuffix,
} from "./cluster.js";

const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const ollama = testbedEndpoints("ollama");
const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `appliance-${suffix}`;
const cpuNode = `kwok-cpu-${suffix}`;
const gpuNode = `kwok-gpu-${suffix}`;
const appliancePath = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/box`;
// Cluster-scoped and named as k3s names it: this suite creates it as k3s would, and removes it afterwards.
const runtimeClassPath = "/apis/node.k8s.io/v1/runtimeclasses/nvidia";

type Appliance = KubeObject & {
  status?: {
    observedGeneration?: number;
    hardwareProfile?: string;
    conditions?: { type: string; status: string; reason: string; message?: string }[];
  };
};
type Workload = KubeObject & {
  spec: {
    template: {
      spec: {
        runtimeClassName?: string;
        containers: { image: string; resources?: { limits?: Record<string, string> } }[];
      };
    };
  };
};

let operator: RunningOperator;

function operatorOptions(): OperatorOptions {
  return {
    kubeConfig,
    // Warnings (failed reconciles, watch restarts) go to a file next to the test bed's logs.
    log: pino(
      { level: "warn" },
      pino.destination({ dest: join(logDir, `operator-${suffix}.log`), sync: true }),
    ),
    identity: `test-operator-${suffix}`,
    leaseNamespace: namespace,
    images: defaultImages,
    profiles: loadHardwareProfiles(join(import.meta.dirname, "../../hardware-profiles")),
    probePort: 0,
    resyncMs: 60_000,
    // As the chart runs it: workload and Secret caches only in the appliance namespaces.
    watchNamespaces: [namespace],
    // The operator runs outside the cluster here, so it reaches the test bed's real Ollama directly.
    ollamaUrl: () => ollama.url,
  };
}

async function appliance(path = appliancePath): Promise<Appliance | undefined> {
  return client.get<Appliance>(path);
}

async function untilCondition(
  type: string,
  status: string,
  reason?: string,
  timeoutMs = 100_000,
  path = appliancePath,
): Promise<Appliance> {
  return waitFor(
    async () => {
      const current = await appliance(path);
      const condition = getStatusCondition(current, type);
      if (condition?.status === status && (reason === undefined || condition.reason === reason))
        return current;
      // Thrown, so a timeout names the conditions as they last were.
      throw new Error(
        (current?.status?.conditions ?? [])
          .map((c) => `${c.type}=${c.status} ${c.reason}${c.message ? `: ${c.message}` : ""}`)
          .join("; "),
      );
    },
    { what: `appliance ${type}=${status}${reason ? ` (${reason})` : ""}`, timeoutMs, intervalMs: 500 },
  );
}

beforeAll(async () => {
  // The GPU steps below start without it (the test bed's API server is fresh per run, and the operator makes none).
  if (await client.get<KubeObject>(runtimeClassPath))
    throw new Error("a RuntimeClass nvidia exists before this suite, which needs to create it itself");
  await installCrds(client);
  await createNamespace(client, namespace);
  await createVolumes(client, `pv-${suffix}`, namespace, "box");
  // No GPU anywhere yet: the first pass must take the CPU fallback.
  await createKwokNode(kubernetes, { name: cpuNode, cpu: "32", memory: "128Gi" });
  operator = await startOperator(operatorOptions());
  await waitFor(async () => (operator.isLeader() ? true : undefined), {
    what: "leadership",
    timeoutMs: 30_000,
  });
  await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: {
      ollama: {
        models: { routing: ollama.chatModel, reflection: ollama.chatModel, embedding: ollama.embedModel },
      },
    },
  });
});

afterAll(async () => {
  await operator?.stop();
  await deleteKwokNode(kubernetes, cpuNode).catch(() => {});
  await deleteKwokNode(kubernetes, gpuNode).catch(() => {});
  await client.delete(runtimeClassPath);
  await client.delete(`/api/v1/namespaces/${namespace}`);
});

describe("a RemramAppliance on a CPU-only cluster", () => {
  it("becomes Ready on kwok pods with the CPU fallback explained and the models listed by the real Ollama", async () => {
    const ready = await untilCondition("Ready", "True");
    expect(getStatusCondition(ready, "GPUAvailable")).toMatchObject({
      status: "False",
      reason: "NoGPUCPUFallback",
    });
    expect(getStatusCondition(ready, "ModelsReady")).toMatchObject({
      status: "True",
      reason: "ModelsListed",
    });
    expect(ready.status?.hardwareProfile).toBe("cpu-only");
    expect(ready.status?.observedGeneration).toBe(ready.metadata.generation);
    const ollamaDeployment = await client.get<Workload>(
      `/apis/apps/v1/namespaces/${namespace}/deployments/box-ollama`,
    );
    expect(ollamaDeployment?.spec.template.spec.runtimeClassName).toBeUndefined();
    expect(
      ollamaDeployment?.spec.template.spec.containers[0]?.resources?.limits?.["nvidia.com/gpu"],
    ).toBeUndefined();
  });

  it("satisfies kubectl wait --for=condition=Ready", async () => {
    const kubectl = binPath("kubectl");
    expect(existsSync(kubectl), `${kubectl} is built by hack/install-kubernetes.sh`).toBe(true);
    const { stdout } = await run(kubectl, [
      `--kubeconfig=${kubernetes.kubeconfig}`,
      "-n",
      namespace,
      "wait",
      "--for=condition=Ready",
      "remramappliance/box",
      "--timeout=30s",
    ]);
    expect(stdout).toContain("condition met");
  });

  it("makes zero API writes when reconciling a converged appliance again", async () => {
    // Ready is not yet converged. The first consistency check starts in the background once Cortex's pods are
    // Ready, and its outcome (a failure here: kwok's Cortex does not answer) reaches status a moment later.
    await waitFor(
      async () => {
        const condition = (await appliance())?.status?.conditions?.find(
          (each) => each.type === "DataConsistent",
        );
        return condition !== undefined && condition.reason !== "NotCheckedYet" ? condition : undefined;
      },
      { what: "the first consistency check's outcome in status", timeoutMs: 60_000, intervalMs: 250 },
    );
    const before = await appliance();
    const children = await client.get<{ items: KubeObject[] }>(
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
    );
    const writes = operator.client.totalWrites();
    const controller = operator.controllers.find((each) => each.name === "appliance");
    for (let round = 0; round < 5; round++) {
      controller?.enqueue(`${namespace}/box`);
      await new Promise((resolve) => setTimeout(resolve, 400));
    }
    expect(operator.client.totalWrites() - writes).toBe(0);
    expect((await appliance())?.metadata.resourceVersion).toBe(before?.metadata.resourceVersion);
    const after = await client.get<{ items: KubeObject[] }>(
      `/apis/apps/v1/namespaces/${namespace}/deployments`,
    );
    expect(after?.items.map((item) => item.metadata.resourceVersion)).toEqual(
      children?.items.map((item) => item.metadata.resourceVersion),
    );
  });

  it("reverts a deleted Service and an edited Deployment", async () => {
    const servicePath = `/api/v1/namespaces/${namespace}/services/box-cortex`;
    const original = await client.get<KubeObject>(servicePath);
    await client.delete(servicePath);
    const recreated = await waitFor(
      async () => {
        const current = await client.get<KubeObject>(servicePath);
        return current && current.metadata.uid !== original?.metadata.uid ? current : undefined;
      },
      { what: "cortex Service recreated", timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(recreated.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "RemramAppliance",
      name: "box",
      controller: true,
    });

    const deploymentPath = `/apis/apps/v1/namespaces/${namespace}/deployments/box-ollama`;
    await client.jsonPatch(deploymentPath, [
      { op: "replace", path: "/spec/template/spec/containers/0/image", value: "tampered/ollama:0" },
    ]);
    const restored = await waitFor(
      async () => {
        const current = await client.get<Workload>(deploymentPath);
        return current?.spec.template.spec.containers[0]?.image === defaultImages.ollama
          ? current
          : undefined;
      },
      { what: "ollama Deployment image restored", timeoutMs: 30_000, intervalMs: 250 },
    );
    expect(restored.spec.template.spec.containers[0]?.image).toBe(defaultImages.ollama);
  });
});

describe("a second operator replica", () => {
  it("stays passive behind the Lease, takes over when the leader stops, and finds nothing to write", async () => {
    const second = await startOperator({ ...operatorOptions(), identity: `test-operator-b-${suffix}` });
    // Start-up asks who it is (a SelfSubjectReview POST); count from here.
    const baseline = second.client.totalWrites();
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(second.isLeader()).toBe(false);
    expect(second.client.totalWrites()).toBe(baseline);
    await operator.stop();
    operator = second;
    await waitFor(async () => (second.isLeader() ? true : undefined), {
      what: "takeover",
      timeoutMs: 30_000,
    });
    // Its controllers start with a full enqueue; give them a moment, then nothing may have been written.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect(second.client.totalWrites()).toBe(baseline);
    expect(getStatusCondition(await appliance(), "Ready")?.status).toBe("True");
  });
});

describe("the same appliance once a GPU node joins", () => {
  it("stays on the CPU while no RuntimeClass nvidia exists, says why, and creates none", async () => {
    // An appliance outside the operator's namespaces (another operator's): the node event below wakes only its own.
    const elsewhere = `elsewhere-${suffix}`;
    await createNamespace(client, elsewhere);
    const strangerPath = `/apis/remram.io/v1alpha1/namespaces/${elsewhere}/remramappliances/stranger`;
    await client.create(`/apis/remram.io/v1alpha1/namespaces/${elsewhere}/remramappliances`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "RemramAppliance",
      metadata: { name: "stranger", namespace: elsewhere },
      spec: {},
    });
    await createKwokNode(kubernetes, {
      name: gpuNode,
      cpu: "16",
      memory: "64Gi",
      gpu: 1,
      labels: { "nvidia.com/gpu.memory": "16376", "nvidia.com/gpu.product": "NVIDIA-RTX-4080" },
    });
    const fallback = await untilCondition("GPUAvailable", "False", "NoGPURuntimeCPUFallback");
    expect(getStatusCondition(fallback, "GPUAvailable")?.message).toContain(
      "1 nvidia.com/gpu allocatable, but RuntimeClass nvidia does not exist",
    );
    // A GPU pods cannot reach sizes nothing: auto stays on the CPU profile, and the appliance stays Ready.
    expect(fallback.status?.hardwareProfile).toBe("cpu-only");
    expect(getStatusCondition(fallback, "Ready")?.status).toBe("True");
    const deployment = await client.get<Workload>(
      `/apis/apps/v1/namespaces/${namespace}/deployments/box-ollama`,
    );
    expect(deployment?.spec.template.spec.runtimeClassName).toBeUndefined();
    expect(
      deployment?.spec.template.spec.containers[0]?.resources?.limits?.["nvidia.com/gpu"],
    ).toBeUndefined();
    expect(await client.get<KubeObject>(runtimeClassPath)).toBeUndefined();
    expect((await appliance(strangerPath))?.status).toBeUndefined();
    expect(
      await client.get<KubeObject>(`/apis/apps/v1/namespaces/${elsewhere}/deployments/stranger-ollama`),
    ).toBeUndefined();
    await client.delete(`/api/v1/namespaces/${elsewhere}`);
  });

  it("moves Ollama onto the GPU under k3s's RuntimeClass once it exists, and leaves that object alone", async () => {
    // As k3s's packaged runtimes manifest has it.
    const created = await client.create<KubeObject>("/apis/node.k8s.io/v1/runtimeclasses", {
      apiVersion: "node.k8s.io/v1",
      kind: "RuntimeClass",
      metadata: { name: "nvidia" },
      handler: "nvidia",
    });
    const withGpu = await untilCondition("GPUAvailable", "True", "GPUFound");
    expect(withGpu.status?.hardwareProfile).toBe("moltbox-baseline");
    const deployment = await client.get<Workload>(
      `/apis/apps/v1/namespaces/${namespace}/deployments/box-ollama`,
    );
    expect(deployment?.spec.template.spec.runtimeClassName).toBe("nvidia");
    expect(deployment?.spec.template.spec.containers[0]?.resources?.limits?.["nvidia.com/gpu"]).toBe("1");
    await untilCondition("Ready", "True");
    const after = await client.get<KubeObject>(runtimeClassPath);
    expect(after?.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(after?.metadata.ownerReferences).toBeUndefined();
    expect(after?.metadata.labels).toBeUndefined();
  });
});

describe("an appliance that requires the GPU under a RuntimeClass nobody made", () => {
  const strictPath = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/strict`;
  const missing = `missing-${suffix}`;

  afterAll(async () => {
    await client.delete(strictPath);
  });

  it("is not Ready, with RuntimeClassNotFound, and its Ollama pods are refused until the RuntimeClass exists", async () => {
    await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "RemramAppliance",
      metadata: { name: "strict", namespace },
      spec: {
        opensearch: { mode: "external", external: { url: "http://opensearch.invalid:9200" } },
        ollama: { gpu: "required", runtimeClassName: missing },
      },
    });
    const strict = await untilCondition("GPUAvailable", "False", "RuntimeClassNotFound", 60_000, strictPath);
    expect(getStatusCondition(strict, "GPUAvailable")?.message).toContain(
      `spec.ollama.gpu is required, but RuntimeClass ${missing} does not exist`,
    );
    expect(getStatusCondition(strict, "Ready")).toMatchObject({
      status: "False",
      reason: "RuntimeClassNotFound",
    });
    // The operator keeps asking for the GPU under the named class; the API server refuses the pods meanwhile.
    const deployment = await client.get<Workload>(
      `/apis/apps/v1/namespaces/${namespace}/deployments/strict-ollama`,
    );
    expect(deployment?.spec.template.spec.runtimeClassName).toBe(missing);
    const refusal = await waitFor(
      async () => {
        const sets = await client.get<{
          items: (KubeObject & { status?: { conditions?: { type: string; message?: string }[] } })[];
        }>(
          `/apis/apps/v1/namespaces/${namespace}/replicasets?labelSelector=app.kubernetes.io/instance%3Dstrict`,
        );
        const ollama = sets?.items.find((set) => set.metadata.name.startsWith("strict-ollama-"));
        return ollama?.status?.conditions?.find((condition) => condition.type === "ReplicaFailure")?.message;
      },
      { what: "the ReplicaSet's ReplicaFailure", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(refusal).toContain(`RuntimeClass "${missing}" not found`);
    expect(await client.get<KubeObject>(`/apis/node.k8s.io/v1/runtimeclasses/${missing}`)).toBeUndefined();
  });
});

describe("deleting the appliance", () => {
  it("garbage-collects its children and keeps the retained data claims", async () => {
    await client.delete(appliancePath);
    await waitFor(
      async () => {
        const list = await client.get<{ items: KubeObject[] }>(
          `/apis/apps/v1/namespaces/${namespace}/deployments`,
        );
        return list?.items.length === 0 ? true : undefined;
      },
      { what: "children garbage-collected", timeoutMs: 60_000, intervalMs: 500 },
    );
    const claims = await client.get<{ items: KubeObject[] }>(
      `/api/v1/namespaces/${namespace}/persistentvolumeclaims`,
    );
    expect(claims?.items.map((claim) => claim.metadata.name).sort()).toEqual(
      expect.arrayContaining(["box-ollama-models", "box-workspace"]),
    );
  });
});
