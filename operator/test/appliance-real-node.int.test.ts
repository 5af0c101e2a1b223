// The user's path on real pods: `helm install` of the chart with the images built here (the operator in-cluster,
// leader election on, restricted pod security), `kubectl apply` of an appliance, `kubectl wait` until it is Ready,
// every component condition True with its real reason. The namespaces carry the test bed's annotations that place
// their pods on the real node, so the operator's children land there exactly as it builds them.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, repoRoot, runDir } from "../../test/harness/src/paths.js";
import { kubectl as runKubectl } from "../../test/harness/src/services/kubectl.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { adminClient, installCrds } from "./cluster.js";

const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const node = testbedEndpoints("node");
const images = node.images.app;
const modelRegistry = node.modelRegistry;
if (modelRegistry === undefined) throw new Error("this suite needs the registry service beside the node");
const suffix = randomBytes(3).toString("hex");
const chart = join(repoRoot, "charts/remram-operator");
const valuesFile = join(runDir, `appliance-values-${suffix}.json`);
const operatorNamespace = `remram-system-${suffix}`;
const namespace = `home-${suffix}`;
const release = `remram-${suffix}`;

const kubectl = (args: readonly string[], input?: string, timeoutMs?: number): Promise<string> =>
  runKubectl(kubernetes.kubeconfig, args, input, timeoutMs);
const helm = (...args: string[]) =>
  run(binPath("helm"), [...args, `--kubeconfig=${kubernetes.kubeconfig}`, "-n", operatorNamespace], {
    maxBuffer: 16 * 1024 * 1024,
  });
const imageParts = (image: string) => ({
  repository: image.slice(0, image.lastIndexOf(":")),
  tag: image.slice(image.lastIndexOf(":") + 1),
});

/** The appliance as a user writes it, with the models named by the box's registry (the test bed's). */
const appliance = {
  apiVersion: "remram.io/v1alpha1",
  kind: "RemramAppliance",
  metadata: { name: "moltbox", namespace },
  spec: {
    hardwareProfile: "auto",
    opensearch: { mode: "embedded" },
    ollama: {
      gpu: "auto",
      models: {
        embedding: modelRegistry.embedModel,
        routing: modelRegistry.chatModel,
        reflection: modelRegistry.chatModel,
      },
      // The test bed's registry speaks plain HTTP, as a model mirror on a home LAN may.
      insecureRegistries: [new URL(modelRegistry.url).host],
    },
    workspace: { gitIdentity: { name: "Moltbox", email: "moltbox@home.arpa" } },
  },
};

interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

async function conditions(): Promise<Condition[]> {
  const json = await kubectl(["-n", namespace, "get", "remramappliance", "moltbox", "-o", "json"]);
  return (JSON.parse(json) as { status?: { conditions?: Condition[] } }).status?.conditions ?? [];
}

/** A jsonpath over the operator's pods. */
const operatorPods = (jsonpath: string): Promise<string> =>
  kubectl([
    "-n",
    operatorNamespace,
    "get",
    "pods",
    "-l",
    "app.kubernetes.io/name=remram-operator",
    "-o",
    `jsonpath=${jsonpath}`,
  ]);

/** name → uid of the appliance's pods or claims: a changed uid means a restart or a lost volume. */
async function uids(kind: "pods" | "pvc"): Promise<Record<string, string>> {
  const json = await kubectl(["-n", namespace, "get", kind, "-o", "json"]);
  const items = (JSON.parse(json) as { items: { metadata: { name: string; uid: string } }[] }).items;
  return Object.fromEntries(items.map((item) => [item.metadata.name, item.metadata.uid]));
}

beforeAll(async () => {
  for (const [name, labels] of [
    [operatorNamespace, {}],
    [namespace, { "pod-security.kubernetes.io/enforce": "restricted" }],
  ] as const) {
    await kubectl(
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels, annotations: node.namespaceAnnotations },
      }),
    );
  }
  writeFileSync(
    valuesFile,
    JSON.stringify({
      image: { ...imageParts(images.operator), pullPolicy: "Never" },
      applianceNamespaces: [namespace],
      operandImages: {
        opensearch: images.opensearch,
        ollama: images.ollama,
        cortex: images.cortex,
        gateway: images.gateway,
        hooks: images.hooks,
        devicePlugin: "nvidia/k8s-device-plugin:v0.17.0",
      },
    }),
  );
  // Other suites applied the CRDs without Helm; --take-ownership adopts them, as an upgrade from a hand install would.
  await helm("install", release, chart, "--take-ownership", "-f", valuesFile, "--wait");
  await kubectl(["apply", "-f", "-"], JSON.stringify(appliance));
}, 300_000);

afterAll(async () => {
  await kubectl([
    "-n",
    namespace,
    "delete",
    "remramappliance",
    "moltbox",
    "--wait=true",
    "--timeout=120s",
  ]).catch(() => undefined);
  await helm("uninstall", release, "--wait").catch(() => undefined);
  for (const name of [namespace, operatorNamespace]) {
    await kubectl(["delete", "namespace", name, "--wait=false"]);
  }
  // Uninstall removes the approval policy; later suites expect the committed CRDs and policy in place.
  await installCrds(adminClient().client);
}, 300_000);

describe("an appliance applied with kubectl, reconciled by the in-cluster operator on the real node", () => {
  it("becomes Ready for `kubectl wait`", async () => {
    try {
      await kubectl(
        ["-n", namespace, "wait", "--for=condition=Ready", "remramappliance/moltbox", "--timeout=400s"],
        undefined,
        410_000,
      );
    } catch (error) {
      const pods = await kubectl(["-n", namespace, "get", "pods", "-o", "wide"]).catch(String);
      const summary = (await conditions().catch(() => []))
        .map((condition) => `${condition.type}=${condition.status} ${condition.reason}: ${condition.message}`)
        .join("\n");
      throw new Error(`${String(error)}\n${summary}\n${pods}`);
    }
  }, 420_000);

  it("reports every component True with its real reason", async () => {
    const byType = Object.fromEntries((await conditions()).map((condition) => [condition.type, condition]));
    for (const type of ["OpenSearchReady", "OllamaReady", "CortexReady", "GatewayReady"]) {
      expect(byType[type]).toMatchObject({ status: "True", reason: "Available" });
    }
    expect(byType.ModelsReady).toMatchObject({ status: "True" });
    expect(byType.HostPrerequisitesMet).toMatchObject({ status: "True" });
    // No GPU on the test bed: the CPU fallback is reported, not hidden.
    expect(byType.GPUAvailable).toMatchObject({ status: "False", reason: "NoGPUCPUFallback" });
  });

  it("runs every component on the real node, under the operator's own service account", async () => {
    const placed = await kubectl([
      "-n",
      namespace,
      "get",
      "pods",
      "-o",
      'jsonpath={range .items[*]}{.spec.nodeName}{"\\n"}{end}',
    ]);
    const nodes = placed.trim().split("\n");
    expect(nodes.length).toBeGreaterThanOrEqual(4);
    expect(new Set(nodes)).toEqual(new Set([node.name]));
    const operator = await operatorPods("{.items[0].spec.serviceAccountName}");
    expect(operator).toBe("remram-operator");
  });

  it("keeps running, and keeps its data, through `helm upgrade` to another operator image", async () => {
    const [podsBefore, claimsBefore] = [await uids("pods"), await uids("pvc")];
    // Another tag in the node's containerd: to Kubernetes a changed image, so the operator's pod is replaced.
    const upgraded = `${images.operator}-upgrade`;
    await run("ctr", [
      "--address",
      node.containerdSocket,
      "-n",
      "k8s.io",
      "images",
      "tag",
      "--force",
      images.operator,
      upgraded,
    ]);
    await helm(
      "upgrade",
      release,
      chart,
      "-f",
      valuesFile,
      "--set",
      `image.tag=${imageParts(upgraded).tag}`,
      "--wait",
    );
    const running = await operatorPods("{.items[*].spec.containers[0].image}");
    expect(running).toBe(upgraded);
    // The new operator takes the Lease and re-reconciles an unchanged appliance: Ready stays, nothing is replaced.
    const newPod = await operatorPods("{.items[0].metadata.name}");
    await waitFor(
      async () => {
        const holder = await kubectl([
          "-n",
          operatorNamespace,
          "get",
          "lease",
          "remram-operator",
          "-o",
          "jsonpath={.spec.holderIdentity}",
        ]);
        return holder === newPod ? true : undefined;
      },
      { what: `the Lease held by ${newPod}`, timeoutMs: 60_000, intervalMs: 1_000 },
    );
    await kubectl([
      "-n",
      namespace,
      "wait",
      "--for=condition=Ready",
      "remramappliance/moltbox",
      "--timeout=60s",
    ]);
    expect(await uids("pods")).toEqual(podsBefore);
    expect(await uids("pvc")).toEqual(claimsBefore);
  }, 240_000);

  it("keeps the CRDs, the appliance and its volumes through `helm uninstall`", async () => {
    const claimsBefore = await uids("pvc");
    await helm("uninstall", release, "--wait");
    for (const crd of ["remramappliances", "dreamschedules", "dimensionpolicies", "artifactproposals"]) {
      await kubectl(["get", "crd", `${crd}.remram.io`]);
    }
    await kubectl(["-n", namespace, "get", "remramappliance", "moltbox"]);
    expect(await uids("pvc")).toEqual(claimsBefore);
  }, 240_000);
});
