// Every image the test bed builds (hack/install-images.sh) runs as a pod on the real node under the restricted Pod
// Security Standard and serves through a Service: OpenSearch and Ollama (the stand-ins), Cortex against them by
// Service name, the gateway with the hooks plugin copied in by its init container, and the operator installed with
// its chart, in-cluster under its own service account. Over 400 lines on purpose: every image on one real node,
// set up once (images loaded, namespaces labelled); split, each part would set the node up again.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, repoRoot, runDir } from "../../test/harness/src/paths.js";
import { kubectl as runKubectl } from "../../test/harness/src/services/kubectl.js";
import { busyboxPod } from "../../test/harness/src/services/node/fixtures.js";
import { pullModel } from "../../test/harness/src/services/ollama-transfer.js";
import { pinned } from "../../test/harness/src/versions.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { remramApplianceSpec } from "../src/api/v1alpha1/remram-appliance.js";
import { hooksPluginInitContainer } from "../src/appliance/children/gateway.js";
import { restrictedContainerSecurity } from "../src/appliance/children/shared.js";
import {
  buildOpenClawConfig,
  gatewayCortexTokenFile,
  gatewayPort,
  hooksMetricsPort,
  hooksVolumeDir,
} from "../src/appliance/openclaw-config.js";
import { adminClient, installCrds } from "./cluster.js";

const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const node = testbedEndpoints("node");
const images = node.images.app;
const suffix = randomBytes(3).toString("hex");
const namespace = `images-${suffix}`;
const releaseNamespace = `images-operator-${suffix}`;
const release = `remram-images-${suffix}`;
const cortexToken = randomBytes(24).toString("hex");
const gatewayToken = randomBytes(24).toString("hex");

const kubectl = (args: readonly string[], input?: object): Promise<string> =>
  runKubectl(
    kubernetes.kubeconfig,
    ["-n", namespace, ...args],
    input === undefined ? undefined : JSON.stringify(input),
  );
const apply = (...manifests: object[]): Promise<string> =>
  kubectl(["apply", "-f", "-"], { apiVersion: "v1", kind: "List", items: manifests });
const helm = (...args: string[]) =>
  run(binPath("helm"), [...args, `--kubeconfig=${kubernetes.kubeconfig}`, "-n", releaseNamespace], {
    maxBuffer: 16 * 1024 * 1024,
  });

interface Component {
  name: string;
  port: number;
  container: Record<string, unknown>;
  initContainers?: object[];
  volumes?: object[];
  uid?: number;
}

/** A one-replica Deployment on the real node (restricted pod security) and its ClusterIP Service. */
function component({ name, port, container, initContainers = [], volumes = [], uid = 65532 }: Component) {
  const labels = { app: name };
  return [
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        template: {
          metadata: { labels },
          spec: {
            nodeSelector: node.nodeSelector,
            tolerations: node.tolerations,
            automountServiceAccountToken: false,
            terminationGracePeriodSeconds: 2,
            securityContext: {
              runAsNonRoot: true,
              runAsUser: uid,
              runAsGroup: uid,
              fsGroup: uid,
              seccompProfile: { type: "RuntimeDefault" },
            },
            initContainers,
            containers: [{ name, imagePullPolicy: "Never", ...container }],
            volumes,
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, labels },
      spec: { selector: labels, ports: [{ name: "http", port, targetPort: port }] },
    },
  ];
}

const emptyDir = (name: string) => ({ name, emptyDir: {} });

const opensearch = component({
  name: "opensearch",
  port: 9200,
  uid: 1000,
  container: {
    image: images.opensearch,
    env: [{ name: "OPENSEARCH_JAVA_OPTS", value: "-Xms256m -Xmx256m" }],
    readinessProbe: { httpGet: { path: "/_cluster/health", port: 9200 }, periodSeconds: 2 },
    // OpenSearch writes data and logs inside its installation, as upstream's image does.
    securityContext: restrictedContainerSecurity(false),
  },
});

const ollama = component({
  name: "ollama",
  port: 11434,
  uid: 1000,
  container: {
    image: images.ollama,
    env: [
      { name: "OLLAMA_MODELS", value: "/models" },
      { name: "HOME", value: "/tmp" },
    ],
    securityContext: restrictedContainerSecurity(),
    volumeMounts: [
      { name: "models", mountPath: "/models" },
      { name: "tmp", mountPath: "/tmp" },
    ],
  },
  volumes: [emptyDir("models"), emptyDir("tmp")],
});

const modelRegistry = node.modelRegistry;
if (modelRegistry === undefined) throw new Error("this suite needs the registry service beside the node");
// Cortex names the model as the pod's Ollama knows it once pulled: by its registry reference, as on a box.
const embedModel = modelRegistry.embedModel;
const chatModel = pinned("CHAT_MODEL_NAME");

const cortex = component({
  name: "cortex",
  port: 8080,
  container: {
    image: images.cortex,
    env: [
      { name: "CORTEX_PORT", value: "8080" },
      { name: "CORTEX_CREDENTIALS_DIR", value: "/var/run/secrets/remram/cortex" },
      { name: "REMRAM_OPENSEARCH_URL", value: "http://opensearch:9200" },
      { name: "REMRAM_OLLAMA_URL", value: "http://ollama:11434" },
      { name: "REMRAM_EMBED_MODEL", value: embedModel },
      { name: "REMRAM_WORKSPACE_DIR", value: "/data/workspace" },
    ],
    securityContext: restrictedContainerSecurity(),
    volumeMounts: [
      { name: "token", mountPath: "/var/run/secrets/remram/cortex", readOnly: true },
      { name: "data", mountPath: "/data" },
      { name: "tmp", mountPath: "/tmp" },
    ],
  },
  // The gateway's credential only: this pod set has no operator, admin or app calling Cortex.
  volumes: [
    { name: "token", secret: { secretName: "cortex-token", items: [{ key: "token", path: "gateway" }] } },
    emptyDir("data"),
    emptyDir("tmp"),
  ],
});

const gatewayStateDir = "/home/node/.openclaw";
const openclawJson = JSON.stringify(
  buildOpenClawConfig({
    gateway: remramApplianceSpec.parse({}).gateway,
    escalation: remramApplianceSpec.parse({}).escalation,
    cloudKeyAvailable: false,
    models: { routing: chatModel, reflection: chatModel, embedding: embedModel },
    generation: { contextWindow: 8192, maxOutputTokens: 128 },
    ollamaUrl: "http://ollama:11434",
    cortexUrl: "http://cortex:8080",
    tokenBudget: 1200,
    retrieveTimeoutMs: 2000,
    gatewayToken,
  }),
);

const gateway = component({
  name: "gateway",
  port: gatewayPort,
  uid: 1000,
  initContainers: [
    {
      // The gateway rewrites its config by atomic rename: it needs a regular file, not the Secret's symlink.
      name: "seed-config",
      image: images.gateway,
      imagePullPolicy: "Never",
      command: ["sh", "-c", `cp /etc/remram/gateway/openclaw.json ${gatewayStateDir}/openclaw.json`],
      securityContext: restrictedContainerSecurity(),
      volumeMounts: [
        { name: "config", mountPath: "/etc/remram/gateway", readOnly: true },
        { name: "state", mountPath: gatewayStateDir },
      ],
    },
    { ...hooksPluginInitContainer(images.hooks), imagePullPolicy: "Never" },
  ],
  container: {
    image: images.gateway,
    args: ["gateway", "run"],
    readinessProbe: {
      httpGet: { path: "/readyz", port: gatewayPort },
      periodSeconds: 2,
      failureThreshold: 120,
    },
    env: [
      { name: "HOME", value: "/home/node" },
      { name: "OPENCLAW_CONFIG_PATH", value: `${gatewayStateDir}/openclaw.json` },
      { name: "OPENCLAW_SKIP_CHANNELS", value: "1" },
    ],
    ports: [
      { name: "http", containerPort: gatewayPort },
      { name: "metrics", containerPort: hooksMetricsPort },
    ],
    securityContext: restrictedContainerSecurity(),
    volumeMounts: [
      { name: "state", mountPath: gatewayStateDir },
      { name: "workspace", mountPath: "/data/workspace" },
      { name: "hooks", mountPath: hooksVolumeDir, readOnly: true },
      { name: "cortex-token", mountPath: "/var/run/secrets/remram/cortex", readOnly: true },
      { name: "tmp", mountPath: "/tmp" },
      // As the operator mounts it: OpenClaw's fallback temp dir when /tmp is writable by others.
      { name: "cache", mountPath: "/home/node/.cache" },
    ],
  },
  volumes: [
    { name: "config", secret: { secretName: "gateway-config" } },
    emptyDir("cache"),
    emptyDir("state"),
    emptyDir("workspace"),
    emptyDir("hooks"),
    {
      name: "cortex-token",
      secret: {
        secretName: "cortex-token",
        items: [{ key: "token", path: gatewayCortexTokenFile.split("/").pop() }],
      },
    },
    emptyDir("tmp"),
  ],
});

/** A busybox pod to reach Services from inside the cluster (the operator's NetworkPolicy admits only listed namespaces). */
const client = busyboxPod(node, "client", { app: "client" }, "exec sleep 3600");

const secret = (name: string, data: Record<string, string>) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name },
  stringData: data,
});

async function clusterIp(service: string, ns = namespace): Promise<string> {
  return runKubectl(kubernetes.kubeconfig, [
    "-n",
    ns,
    "get",
    "service",
    service,
    "-o",
    "jsonpath={.spec.clusterIP}",
  ]);
}

/** GET through the Service's ClusterIP from the host (routed through the node, as a LAN client would). */
async function getThroughService(service: string, port: number, path: string): Promise<Response> {
  return fetch(`http://${await clusterIp(service)}:${port}${path}`, { signal: AbortSignal.timeout(5_000) });
}

/** Wait for a rollout; on failure the error carries the pods' state and logs, the first thing to look at. */
async function rolledOut(deployment: string, ns = namespace): Promise<void> {
  const inNamespace = (args: string[]) => runKubectl(kubernetes.kubeconfig, ["-n", ns, ...args]);
  try {
    await inNamespace(["rollout", "status", `deployment/${deployment}`, "--timeout=240s"]);
  } catch (error) {
    const pods = await inNamespace(["get", "pods", "-o", "wide"]).catch(String);
    const logs = await inNamespace([
      "logs",
      `deployment/${deployment}`,
      "--all-containers",
      "--tail=40",
    ]).catch(String);
    throw new Error(`${deployment} did not roll out: ${String(error)}\n${pods}\n${logs}`);
  }
}

beforeAll(async () => {
  for (const name of [namespace, releaseNamespace]) {
    await runKubectl(
      kubernetes.kubeconfig,
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name, labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
      }),
    );
  }
  await apply(
    secret("cortex-token", { token: cortexToken }),
    secret("gateway-config", { "openclaw.json": openclawJson }),
    ...opensearch,
    ...ollama,
    ...cortex,
    ...gateway,
    client,
  );
  // The chart as a box owner installs it, with the image built here and the real node as its only place to run.
  const values = join(runDir, `images-values-${suffix}.json`);
  writeFileSync(
    values,
    JSON.stringify({
      image: {
        repository: images.operator.slice(0, images.operator.lastIndexOf(":")),
        tag: images.operator.slice(images.operator.lastIndexOf(":") + 1),
        pullPolicy: "Never",
      },
      applianceNamespaces: [namespace],
      metrics: { allowedNamespaces: [namespace] },
      nodeSelector: node.nodeSelector,
      tolerations: node.tolerations,
    }),
  );
  // Other suites applied the CRDs without Helm; --take-ownership adopts them as an upgrade from a hand install would.
  await helm("install", release, join(repoRoot, "charts/remram-operator"), "--take-ownership", "-f", values);
  await Promise.all(
    [
      rolledOut("opensearch"),
      rolledOut("ollama"),
      rolledOut("cortex"),
      rolledOut("gateway"),
      rolledOut("remram-operator", releaseNamespace),
      kubectl(["wait", "--for=condition=Ready", "pod/client", "--timeout=120s"]),
    ].map((step) => step.then(() => undefined)),
  );
}, 420_000);

afterAll(async () => {
  await helm("uninstall", release, "--wait").catch(() => undefined);
  for (const name of [namespace, releaseNamespace]) {
    await runKubectl(kubernetes.kubeconfig, ["delete", "namespace", name, "--wait=false"]);
  }
  // Uninstall removes the approval policy; later suites expect the committed CRDs and policy in place.
  await installCrds(adminClient().client);
});

describe("the images built here, as pods on the real node", () => {
  it("run OpenSearch (the stand-in) and answer its cluster health through the Service", async () => {
    const response = await getThroughService(
      "opensearch",
      9200,
      "/_cluster/health?wait_for_status=yellow&timeout=30s",
    );
    expect(response.status).toBe(200);
    const health = (await response.json()) as { status: string; number_of_nodes: number };
    expect(["green", "yellow"]).toContain(health.status);
    const root = (await (await getThroughService("opensearch", 9200, "/")).json()) as {
      version: { number: string };
    };
    expect(root.version.number).toBe(pinned("OPENSEARCH_VERSION"));
  });

  it("run Ollama (the stand-in) at the pinned version", async () => {
    const response = await getThroughService("ollama", 11434, "/api/version");
    expect(await response.json()).toEqual({ version: pinned("OLLAMA_VERSION") });
  });

  it("run Ollama that pulls its embedding model from the test bed's registry by Service name", async () => {
    const ollamaUrl = `http://${await clusterIp("ollama")}:11434`;
    const lines = await pullModel({ ollamaUrl, model: modelRegistry.embedModel, timeoutMs: 120_000 });
    // Streamed progress per blob, downloaded from the blob server the registry redirected the pod to.
    expect(lines.some((line) => line.status?.startsWith("pulling ") && line.completed === line.total)).toBe(
      true,
    );
    expect(lines.map((line) => line.status)).toEqual(
      expect.arrayContaining(["verifying sha256 digest", "success"]),
    );
    const embedding = await fetch(`${ollamaUrl}/api/embed`, {
      method: "POST",
      body: JSON.stringify({ model: modelRegistry.embedModel, input: "the box in the hallway" }),
      signal: AbortSignal.timeout(60_000),
    });
    const { embeddings } = (await embedding.json()) as { embeddings: number[][] };
    expect(embeddings[0]).toHaveLength(384);
  });

  it("run Cortex, ready against OpenSearch and Ollama by Service name, with its API behind its token", async () => {
    const ready = await waitFor(
      async () => {
        const response = await getThroughService("cortex", 8080, "/readyz");
        return response.status === 200
          ? ((await response.json()) as { checks: { opensearch: boolean } })
          : undefined;
      },
      { what: "Cortex ready through its Service", timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(ready.checks).toEqual({ opensearch: true, indices: true, embeddingModel: "present" });
    const anonymous = await getThroughService("cortex", 8080, "/dimensions");
    expect(anonymous.status).toBe(401);
  });

  it("run the gateway with the hooks plugin its init container copied from the hooks image", async () => {
    const ready = await waitFor(
      async () =>
        (await getThroughService("gateway", gatewayPort, "/readyz")).status === 200 ? true : undefined,
      { what: "the gateway ready through its Service", timeoutMs: 120_000, intervalMs: 2_000 },
    );
    expect(ready).toBe(true);
    // The plugin's own metrics endpoint answers from the gateway pod: the plugin was loaded from the copied files.
    const podIp = await kubectl([
      "get",
      "pod",
      "-l",
      "app=gateway",
      "-o",
      "jsonpath={.items[0].status.podIP}",
    ]);
    const metrics = await waitFor(
      () =>
        fetch(`http://${podIp}:${hooksMetricsPort}/metrics`, { signal: AbortSignal.timeout(5_000) }).then(
          (response) => response.text(),
          () => undefined,
        ),
      { what: "the hooks plugin's metrics in the gateway pod", timeoutMs: 60_000, intervalMs: 1_000 },
    ).catch(async (error: unknown) => {
      const logs = await kubectl(["logs", "deployment/gateway", "--tail=60"]).catch(String);
      throw new Error(`${String(error)}\n--- gateway log ---\n${logs}`);
    });
    expect(metrics).toMatch(/^# HELP remram_hooks_/m);
  });

  it("run the operator from its chart, in-cluster, ready and reachable from an allowed namespace", async () => {
    const url = `http://remram-operator-metrics.${releaseNamespace}.svc.cluster.local:8081/readyz`;
    const readiness = await waitFor(
      async () =>
        kubectl(["exec", "client", "--", "timeout", "10", "wget", "-qO-", url]).catch(() => undefined),
      { what: "the operator's /readyz from the client pod", timeoutMs: 60_000, intervalMs: 1_000 },
    );
    expect(readiness).toBe("ok");
    const user = await runKubectl(kubernetes.kubeconfig, [
      "-n",
      releaseNamespace,
      "get",
      "pod",
      "-l",
      "app.kubernetes.io/name=remram-operator",
      "-o",
      "jsonpath={.items[0].spec.serviceAccountName} {.items[0].spec.nodeName}",
    ]);
    expect(user).toBe(`remram-operator ${node.name}`);
  });
});
