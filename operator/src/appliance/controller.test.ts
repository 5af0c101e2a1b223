import { describe, expect, it } from "vitest";
import { cacheKey } from "../runtime/cache.js";
import type { KubeObject } from "../runtime/kube-client.js";
import * as kinds from "../runtime/resource-kinds.js";
import { RecordingManager } from "../runtime/testing/recording-manager.js";
import { applianceOfLabel, managedSelector, onGpuChange, setupApplianceController } from "./controller.js";
import type { GpuNodeLike } from "./gpu.js";
import { images, profiles } from "./testing/context.js";

function node(
  allocatable: Record<string, string>,
  extra: Partial<GpuNodeLike> = {},
): KubeObject & GpuNodeLike {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "box-node", labels: { "kubernetes.io/hostname": "box-node" } },
    status: { allocatable },
    ...extra,
  } as KubeObject & GpuNodeLike;
}

function appliance(namespace: string, name: string): KubeObject {
  return { apiVersion: "remram.io/v1alpha1", kind: "RemramAppliance", metadata: { name, namespace } };
}

describe("the appliance controller", () => {
  function setUp() {
    const manager = new RecordingManager();
    setupApplianceController(manager, { profiles, images, operatorNamespace: "remram-system" });
    const declaration = manager.declaration("appliance");
    const watch = (kind: string) => {
      const found = declaration.watches?.find((each) => each.kind.kind === kind);
      if (found === undefined) throw new Error(`no watch on ${kind}`);
      return found;
    };
    const appliances = manager.caches.get(cacheKey(kinds.remramAppliances));
    if (appliances === undefined) throw new Error("no appliance cache");
    appliances.objects = [appliance("home", "box"), appliance("lab", "bench")];
    return { manager, declaration, watch };
  }

  it("reconciles appliances, owns their managed children and watches PVCs, OpenSearch pods, nodes and RuntimeClasses", () => {
    const { declaration } = setUp();
    expect(declaration.for).toEqual(kinds.remramAppliances);
    expect(declaration.owns).toEqual(
      [
        kinds.deployments,
        kinds.statefulSets,
        kinds.services,
        kinds.secrets,
        kinds.networkPolicies,
        kinds.ingresses,
        kinds.serviceAccounts,
        kinds.roles,
        kinds.roleBindings,
      ].map((kind) => ({ kind, labelSelector: managedSelector })),
    );
    expect(declaration.watches?.map(({ kind, labelSelector }) => [kind.kind, labelSelector])).toEqual([
      ["PersistentVolumeClaim", "app.kubernetes.io/managed-by=remram-operator"],
      ["Pod", "app.kubernetes.io/managed-by=remram-operator,app.kubernetes.io/name=opensearch"],
      ["Node", undefined],
      ["RuntimeClass", undefined],
    ]);
    expect(declaration.onStop).toBeTypeOf("function");
  });

  it("wakes every appliance when a node's GPUs change, not on a heartbeat", () => {
    const { watch } = setUp();
    const nodes = watch("Node");
    const every = ["home/box", "lab/bench"];
    expect(nodes.map(node({ cpu: "16" }), "add")).toEqual(every);
    expect(nodes.map(node({ cpu: "16", memory: "64Gi" }), "update")).toEqual([]);
    expect(nodes.map(node({ cpu: "16", "nvidia.com/gpu": "1" }), "update")).toEqual(every);
    expect(nodes.map(node({ "nvidia.com/gpu": "1" }, { spec: { unschedulable: true } }), "update")).toEqual(
      every,
    );
    expect(nodes.map(node({}), "delete")).toEqual(every);
    expect(nodes.map(node({ cpu: "16" }), "add")).toEqual(every);
  });

  it("wakes every appliance on any RuntimeClass event", () => {
    const { watch } = setUp();
    const runtimeClass = { apiVersion: "node.k8s.io/v1", kind: "RuntimeClass", metadata: { name: "nvidia" } };
    expect(watch("RuntimeClass").map(runtimeClass, "add")).toEqual(["home/box", "lab/bench"]);
  });

  it("watches the ingress controller's EndpointSlices in its own namespace only when told where it is", () => {
    const manager = new RecordingManager();
    setupApplianceController(manager, {
      profiles,
      images,
      operatorNamespace: "remram-system",
      ingressController: { namespace: "kube-system", name: "traefik" },
    });
    const slices = manager
      .declaration("appliance")
      .watches?.find((each) => each.kind.kind === "EndpointSlice");
    expect(slices).toMatchObject({
      kind: kinds.endpointSlices,
      labelSelector: "kubernetes.io/service-name=traefik",
      namespace: "kube-system",
    });
    manager.caches.get(cacheKey(kinds.remramAppliances))?.objects.push(appliance("home", "box"));
    const slice = {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name: "traefik-x" },
    };
    expect(slices?.map(slice, "update")).toEqual(["home/box"]);
    // Without the chart's ingressController nothing in kube-system is watched.
    const { declaration } = setUp();
    expect(declaration.watches?.some((each) => each.kind.kind === "EndpointSlice")).toBe(false);
  });

  it("maps retained PVCs and OpenSearch pods to their appliance by label", () => {
    const { watch } = setUp();
    const labelled: KubeObject = {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: {
        name: "data-box-opensearch-0",
        namespace: "home",
        labels: { "remram.io/appliance": "box" },
      },
    };
    expect(watch("PersistentVolumeClaim").map(labelled, "delete")).toEqual(["home/box"]);
    expect(watch("Pod").map({ ...labelled, kind: "Pod" }, "update")).toEqual(["home/box"]);
    expect(applianceOfLabel({ ...labelled, metadata: { name: "other", namespace: "home" } })).toEqual([]);
  });
});

describe("a node's GPU fingerprint", () => {
  it("changes with GPU labels and runtime handlers, not with other labels", () => {
    const every = () => ["home/box"];
    const map = onGpuChange(every);
    const base = node({ "nvidia.com/gpu": "1" });
    expect(map(base, "add")).toEqual(every());
    expect(map({ ...base, metadata: { ...base.metadata, labels: { zone: "attic" } } }, "update")).toEqual([]);
    expect(
      map({ ...base, metadata: { ...base.metadata, labels: { "nvidia.com/gpu.product": "RTX" } } }, "update"),
    ).toEqual(every());
    expect(
      map(
        {
          ...base,
          metadata: { ...base.metadata, labels: { "nvidia.com/gpu.product": "RTX" } },
          status: { ...base.status, runtimeHandlers: [{ name: "nvidia" }] },
        },
        "update",
      ),
    ).toEqual(every());
  });
});
