import { KubeConfig } from "@kubernetes/client-node";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { images, profiles } from "./appliance/testing/context.js";
import { setupControllers } from "./operator.js";
import { cacheSources } from "./runtime/cache.js";
import { remramKinds } from "./runtime/resource-kinds.js";
import { RecordingManager } from "./runtime/testing/recording-manager.js";

const managed = "app.kubernetes.io/managed-by=remram-operator";

function setUp() {
  const manager = new RecordingManager();
  setupControllers(
    manager,
    {
      kubeConfig: new KubeConfig(),
      log: pino({ level: "silent" }),
      identity: "operator-0",
      leaseNamespace: "remram-system",
      images,
      profiles,
    },
    "system:serviceaccount:remram-system:remram-operator",
  );
  return manager;
}

// The "before" lists are what startOperator wired by hand before the controllers declared their watches.
describe("the operator's controllers", () => {
  it("are the four, in the order they start", () => {
    expect(setUp().declarations.map((each) => each.name)).toEqual([
      "appliance",
      "dreamschedule",
      "dimensionpolicy",
      "artifactproposal",
    ]);
  });

  it("each watch the kinds they watched before", () => {
    const summary = setUp().declarations.map((each) => ({
      name: each.name,
      for: each.for.kind,
      owns: (each.owns ?? []).map((owned) => `${owned.kind.kind}?${owned.labelSelector}`),
      watches: (each.watches ?? []).map((watch) => `${watch.kind.kind}?${watch.labelSelector ?? ""}`),
    }));
    expect(summary).toEqual([
      {
        name: "appliance",
        for: "RemramAppliance",
        owns: [
          "Deployment",
          "StatefulSet",
          "Service",
          "Secret",
          "NetworkPolicy",
          "Ingress",
          // remram-app's identity.
          "ServiceAccount",
          "Role",
          "RoleBinding",
        ].map((kind) => `${kind}?${managed}`),
        watches: [
          `PersistentVolumeClaim?${managed}`,
          `Pod?${managed},app.kubernetes.io/name=opensearch`,
          "Node?",
          "RuntimeClass?",
        ],
      },
      { name: "dreamschedule", for: "DreamSchedule", owns: [], watches: [] },
      // Its own kind again: a policy's change wakes the other policies of its appliance.
      { name: "dimensionpolicy", for: "DimensionPolicy", owns: [], watches: ["DimensionPolicy?"] },
      { name: "artifactproposal", for: "ArtifactProposal", owns: [], watches: [] },
    ]);
  });

  it("share the list-watches startOperator opened before, one per kind, selector and namespace", () => {
    const manager = setUp();
    const scope = { watchNamespaces: ["home", "lab"], clusterWideKinds: remramKinds };
    const sources = manager.selections.flatMap((each) => cacheSources(each.kind, each.labelSelector, scope));
    const perNamespace = (plural: string, prefix: string, labelSelector = managed) =>
      ["home", "lab"].map((namespace) => ({
        name: `${plural}@${namespace}`,
        path: `${prefix}/namespaces/${namespace}/${plural}`,
        labelSelector,
      }));
    const byName = (a: { name: string }, b: { name: string }) => a.name.localeCompare(b.name);
    expect(sources.sort(byName)).toEqual(
      [
        ...["remramappliances", "dreamschedules", "dimensionpolicies", "artifactproposals"].map((plural) => ({
          name: plural,
          path: `/apis/remram.io/v1alpha1/${plural}`,
        })),
        { name: "nodes", path: "/api/v1/nodes" },
        { name: "runtimeclasses", path: "/apis/node.k8s.io/v1/runtimeclasses" },
        ...perNamespace("deployments", "/apis/apps/v1"),
        ...perNamespace("statefulsets", "/apis/apps/v1"),
        ...perNamespace("services", "/api/v1"),
        ...perNamespace("secrets", "/api/v1"),
        ...perNamespace("persistentvolumeclaims", "/api/v1"),
        ...perNamespace("networkpolicies", "/apis/networking.k8s.io/v1"),
        ...perNamespace("ingresses", "/apis/networking.k8s.io/v1"),
        ...perNamespace("serviceaccounts", "/api/v1"),
        ...perNamespace("roles", "/apis/rbac.authorization.k8s.io/v1"),
        ...perNamespace("rolebindings", "/apis/rbac.authorization.k8s.io/v1"),
        ...perNamespace("pods", "/api/v1", `${managed},app.kubernetes.io/name=opensearch`),
      ].sort(byName),
    );
  });
});
