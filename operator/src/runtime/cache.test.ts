import { describe, expect, it } from "vitest";
import { cacheKey, cacheSources, type EventHandler, SharedCache, type SourceInformer } from "./cache.js";
import type { KubeObject } from "./kube-client.js";
import { deployments, endpointSlices, nodes, remramAppliances } from "./resource-kinds.js";

describe("a cache's list-watches", () => {
  it("are one per watched namespace for a namespaced kind", () => {
    expect(cacheSources(deployments, "managed=yes", { watchNamespaces: ["a", "b"] })).toEqual([
      { name: "deployments@a", path: "/apis/apps/v1/namespaces/a/deployments", labelSelector: "managed=yes" },
      { name: "deployments@b", path: "/apis/apps/v1/namespaces/b/deployments", labelSelector: "managed=yes" },
    ]);
  });

  it("are one over the cluster for a cluster-scoped kind, a cluster-wide kind, or no namespace restriction", () => {
    const scope = { watchNamespaces: ["a"], clusterWideKinds: [remramAppliances] };
    expect(cacheSources(nodes, undefined, scope)).toEqual([{ name: "nodes", path: "/api/v1/nodes" }]);
    expect(cacheSources(remramAppliances, undefined, scope)).toEqual([
      { name: "remramappliances", path: "/apis/remram.io/v1alpha1/remramappliances" },
    ]);
    expect(cacheSources(deployments, undefined, {})).toEqual([
      { name: "deployments", path: "/apis/apps/v1/deployments" },
    ]);
  });

  it("are one in a pinned namespace, whatever the watched namespaces", () => {
    const selector = "kubernetes.io/service-name=traefik";
    for (const scope of [{ watchNamespaces: ["a", "b"] }, {}]) {
      expect(cacheSources(endpointSlices, selector, scope, "kube-system")).toEqual([
        {
          name: "endpointslices@kube-system",
          path: "/apis/discovery.k8s.io/v1/namespaces/kube-system/endpointslices",
          labelSelector: selector,
        },
      ]);
    }
  });

  it("are keyed by group/version/kind, label selector and pinned namespace", () => {
    expect(cacheKey(deployments)).toBe("apps/v1/Deployment");
    expect(cacheKey(deployments, "managed=yes")).toBe("apps/v1/Deployment?managed=yes");
    expect(cacheKey(deployments, "managed=yes", "kube-system")).toBe(
      "apps/v1/Deployment@kube-system?managed=yes",
    );
  });
});

describe("a shared cache", () => {
  function objectIn(namespace: string, name: string): KubeObject {
    return { apiVersion: "v1", kind: "Thing", metadata: { name, namespace } };
  }

  it("reads its informers as one and hands every event to every subscriber", () => {
    const handlers: EventHandler[] = [];
    const contents = { a: [objectIn("a", "x")], b: [objectIn("b", "y")] };
    const cache = new SharedCache(
      cacheSources(deployments, undefined, { watchNamespaces: ["a", "b"] }),
      (source, onEvent): SourceInformer => {
        handlers.push(onEvent);
        const objects = source.name.endsWith("@a") ? contents.a : contents.b;
        return {
          get: (namespace, name) =>
            objects.find((each) => each.metadata.namespace === namespace && each.metadata.name === name),
          list: () => objects,
          start: async () => {},
          stop: async () => {},
          hasSynced: () => true,
        };
      },
    );
    expect(cache.list().map((each) => each.metadata.name)).toEqual(["x", "y"]);
    expect(cache.get("b", "y")?.metadata.name).toBe("y");
    expect(cache.get("a", "y")).toBeUndefined();

    const seen: string[] = [];
    cache.subscribe((object, event) => seen.push(`first ${event} ${object.metadata.name}`));
    cache.subscribe((object, event) => seen.push(`second ${event} ${object.metadata.name}`));
    handlers[1]?.(objectIn("b", "z"), "add");
    expect(seen).toEqual(["first add z", "second add z"]);
  });
});
