import { describe, expect, it } from "vitest";
import {
  type ControlPlaneLayout,
  kubeApiserverArgs,
  kwokArgs,
  renderKubeconfig,
  renderTokenFile,
} from "./kubernetes.js";
import { kwokNodeManifest, nodeSchedulable } from "./kwok-nodes.js";

const layout: ControlPlaneLayout = {
  dir: "/state/kubernetes-6443",
  etcdPort: 2379,
  apiserverPort: 6443,
  kwokPort: 10247,
  stagesFile: "/cache/share/kwok-stages.yaml",
};

describe("renderTokenFile", () => {
  it("quotes the group list so a user in several groups stays one CSV field", () => {
    expect(
      renderTokenFile([
        { token: "t1", user: "admin", groups: ["system:masters", "ops"] },
        { token: "t2", user: "system:kube-scheduler", groups: [] },
      ]),
    ).toBe('t1,admin,admin,"system:masters,ops"\nt2,system:kube-scheduler,system:kube-scheduler\n');
  });
});

describe("renderKubeconfig", () => {
  it("points the single context at the server with the token and TLS verification off", () => {
    const parsed = JSON.parse(renderKubeconfig("https://127.0.0.1:6443", { user: "admin", token: "secret" }));
    expect(parsed["current-context"]).toBe("remram-testbed");
    expect(parsed.clusters[0].cluster).toEqual({
      server: "https://127.0.0.1:6443",
      "insecure-skip-tls-verify": true,
    });
    expect(parsed.users[0]).toEqual({ name: "admin", user: { token: "secret" } });
  });
});

describe("control-plane arguments", () => {
  it("keep the apiserver on loopback with Node and RBAC authorization against this instance's etcd", () => {
    const args = kubeApiserverArgs(layout);
    expect(args).toContain("--bind-address=127.0.0.1");
    expect(args).toContain("--secure-port=6443");
    expect(args).toContain("--etcd-servers=http://127.0.0.1:2379");
    expect(args).toContain("--authorization-mode=Node,RBAC");
  });

  it("let kwok manage only nodes carrying the fake-node annotation", () => {
    const args = kwokArgs(layout);
    expect(args).toContain("--manage-all-nodes=false");
    expect(args).toContain("--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake");
    expect(args).toContain("--config=/cache/share/kwok-stages.yaml");
  });
});

describe("kwokNodeManifest", () => {
  it("advertises GPUs as nvidia.com/gpu in both capacity and allocatable", () => {
    const node = kwokNodeManifest({ name: "gpu-1", cpu: "8", memory: "32Gi", gpu: 2 });
    expect(node.status?.capacity).toEqual({ cpu: "8", memory: "32Gi", pods: "110", "nvidia.com/gpu": "2" });
    expect(node.status?.allocatable).toEqual(node.status?.capacity);
    expect(node.metadata.annotations).toEqual({ "kwok.x-k8s.io/node": "fake" });
  });

  it("leaves the GPU resource out of a CPU-only node and lets caller labels override defaults", () => {
    const node = kwokNodeManifest({
      name: "cpu-1",
      cpu: "4",
      memory: "8Gi",
      labels: { type: "edge", zone: "a" },
    });
    expect(node.status?.capacity).not.toHaveProperty("nvidia.com/gpu");
    expect(node.metadata.labels).toMatchObject({
      "kubernetes.io/hostname": "cpu-1",
      type: "edge",
      zone: "a",
    });
  });
});

describe("nodeSchedulable", () => {
  const readyNode = kwokNodeManifest({ name: "n", cpu: "1", memory: "1Gi" });
  readyNode.status = { ...readyNode.status, conditions: [{ type: "Ready", status: "True" }] };

  it("is true for a Ready node without the not-ready taint", () => {
    expect(nodeSchedulable(readyNode)).toBe(true);
  });

  it("is false while the lifecycle controller still has the not-ready taint on a Ready node", () => {
    expect(
      nodeSchedulable({
        ...readyNode,
        spec: { taints: [{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }] },
      }),
    ).toBe(false);
  });

  it("is false for a node that is not Ready yet", () => {
    expect(nodeSchedulable(kwokNodeManifest({ name: "n", cpu: "1", memory: "1Gi" }))).toBe(false);
  });
});
