// The real node: pods that really run, reach each other by Service name through CoreDNS, are really cut off by a
// NetworkPolicy, and keep their data on a local-path volume across a reschedule.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../inject.js";
import { waitFor } from "../../wait.js";
import { kubectl as runKubectl } from "../kubectl.js";
import { busyboxPod, httpdScript } from "./fixtures.js";

const kubernetes = testbedEndpoints("kubernetes");
const node = testbedEndpoints("node");
const namespace = `realnode-${randomBytes(3).toString("hex")}`;

const kubectl = (args: readonly string[], input?: object): Promise<string> =>
  runKubectl(
    kubernetes.kubeconfig,
    ["-n", namespace, ...args],
    input === undefined ? undefined : JSON.stringify(input),
  );

const apply = (manifest: object): Promise<string> => kubectl(["apply", "-f", "-"], manifest);

const pod = (name: string, labels: Record<string, string>, script: string, claim?: string): object =>
  busyboxPod(node, name, labels, script, claim);
const webScript = httpdScript("hello-from-web");

async function ready(name: string): Promise<void> {
  await kubectl(["wait", "--for=condition=Ready", `pod/${name}`, "--timeout=90s"]);
}

/** busybox wget from inside a pod (`timeout`, not `wget -T`: Debian's static busybox segfaults on -T). */
async function fetchFrom(podName: string, url: string): Promise<string> {
  return kubectl(["exec", podName, "--", "timeout", "10", "wget", "-qO-", url]);
}

beforeAll(async () => {
  await apply({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name: namespace,
      labels: { "pod-security.kubernetes.io/enforce": "restricted" },
    },
  });
  await apply(pod("web", { app: "web" }, webScript));
  await apply(pod("client", { app: "client" }, "exec sleep 3600"));
  await apply(pod("stranger", { app: "stranger" }, "exec sleep 3600"));
  await apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web" },
    spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  await Promise.all(["web", "client", "stranger"].map(ready));
}, 180_000);

afterAll(async () => {
  await runKubectl(kubernetes.kubeconfig, ["delete", "namespace", namespace, "--wait=false"]);
});

describe("the real node", () => {
  it("is Ready, tainted for real-node pods only and runs the pods on containerd", async () => {
    const nodeJson = JSON.parse(await kubectl(["get", "node", node.name, "-o", "json"])) as {
      spec: { taints?: { key: string }[] };
      status: { nodeInfo: { containerRuntimeVersion: string; kubeletVersion: string } };
    };
    expect(nodeJson.status.nodeInfo.kubeletVersion).toBe("v1.34.4");
    expect(nodeJson.status.nodeInfo.containerRuntimeVersion).toMatch(/^containerd:\/\//);
    expect(nodeJson.spec.taints?.map((taint) => taint.key)).toContain(node.tolerations[0]?.key);
    const placed = await kubectl(["get", "pod", "web", "-o", "jsonpath={.spec.nodeName} {.status.podIP}"]);
    const [nodeName, podIp] = placed.split(" ");
    expect(nodeName).toBe(node.name);
    expect(podIp).toMatch(/^10\.42\./);
  });

  it("serves logs and exec through the kubelet, as the apiserver's own client", async () => {
    expect(await kubectl(["exec", "client", "--", "id", "-u"])).toBe("65534\n");
    await kubectl(["logs", "web"]);
  });

  it("resolves Services by name through CoreDNS and routes them through kube-proxy", async () => {
    // A new Service reaches kube-proxy's rules and CoreDNS's cache a moment after its pods are Ready, and a
    // busy machine can drop the first DNS query (busybox waits 5 s before it retries): allow for that, once.
    await waitFor(
      async () => ((await fetchFrom("client", "http://web/")) === "hello-from-web\n" ? true : undefined),
      {
        what: "the Service web answering by name",
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    );
    expect(await fetchFrom("client", `http://web.${namespace}.svc.cluster.local/`)).toBe("hello-from-web\n");
    // From the host, as a LAN client of the box would: through the node's address to the ClusterIP.
    const clusterIp = await kubectl(["get", "service", "web", "-o", "jsonpath={.spec.clusterIP}"]);
    const response = await fetch(`http://${clusterIp}/`, { signal: AbortSignal.timeout(5_000) });
    expect(await response.text()).toBe("hello-from-web\n");
  });

  it("drops what a NetworkPolicy denies and lets through what it allows", async () => {
    await apply({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "web-deny-all" },
      spec: { podSelector: { matchLabels: { app: "web" } }, policyTypes: ["Ingress"] },
    });
    await waitFor(
      async () =>
        (await fetchFrom("client", "http://web/").catch(() => "blocked")) === "blocked" ? true : undefined,
      { what: "the deny policy in force", timeoutMs: 30_000, intervalMs: 500 },
    );
    await expect(fetchFrom("stranger", "http://web/")).rejects.toThrow();

    await apply({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: { name: "web-allow-client" },
      spec: {
        podSelector: { matchLabels: { app: "web" } },
        policyTypes: ["Ingress"],
        ingress: [{ from: [{ podSelector: { matchLabels: { app: "client" } } }] }],
      },
    });
    await waitFor(
      async () => ((await fetchFrom("client", "http://web/")) === "hello-from-web\n" ? true : undefined),
      {
        what: "the allow policy in force",
        timeoutMs: 30_000,
        intervalMs: 500,
      },
    );
    await expect(fetchFrom("stranger", "http://web/")).rejects.toThrow();
  });

  it("places a plain pod of a namespace annotated for it on the real node", async () => {
    // What the operator creates carries no test-bed toleration; the namespace's annotations add it at admission.
    const placed = `${namespace}-placed`;
    await runKubectl(
      kubernetes.kubeconfig,
      ["apply", "-f", "-"],
      JSON.stringify({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: placed, annotations: node.namespaceAnnotations },
      }),
    );
    try {
      const plain = pod("plain", { app: "plain" }, "exec sleep 3600") as { spec: Record<string, unknown> };
      delete plain.spec.nodeSelector;
      delete plain.spec.tolerations;
      await runKubectl(kubernetes.kubeconfig, ["-n", placed, "apply", "-f", "-"], JSON.stringify(plain));
      await runKubectl(kubernetes.kubeconfig, [
        "-n",
        placed,
        "wait",
        "--for=condition=Ready",
        "pod/plain",
        "--timeout=90s",
      ]);
      const nodeName = await runKubectl(kubernetes.kubeconfig, [
        "-n",
        placed,
        "get",
        "pod",
        "plain",
        "-o",
        "jsonpath={.spec.nodeName}",
      ]);
      expect(nodeName).toBe(node.name);
    } finally {
      await runKubectl(kubernetes.kubeconfig, ["delete", "namespace", placed, "--wait=false"]);
    }
  });

  it("keeps a local-path volume's data when its pod is deleted and rescheduled", async () => {
    await apply({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "data" },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "16Mi" } } },
    });
    await apply(pod("writer", { app: "writer" }, "echo kept > /data/file && exec sleep 3600", "data"));
    await ready("writer");
    expect(
      await kubectl(["get", "pvc", "data", "-o", "jsonpath={.status.phase} {.spec.storageClassName}"]),
    ).toBe("Bound local-path");
    await kubectl(["delete", "pod", "writer", "--wait=true"]);
    await apply(pod("reader", { app: "reader" }, "exec sleep 3600", "data"));
    await ready("reader");
    expect(await kubectl(["exec", "reader", "--", "cat", "/data/file"])).toBe("kept\n");
  });
});
