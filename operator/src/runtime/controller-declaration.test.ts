import { describe, expect, it } from "vitest";
import { type ControllerDeclaration, eventRoutes, type NamespaceScope } from "./controller-declaration.js";
import type { KubeObject, OwnerReference } from "./kube-client.js";

const owner = { apiVersion: "example.io/v1", kind: "Owner" };
const child = { apiVersion: "apps/v1", kind: "Deployment" };
const other = { apiVersion: "v1", kind: "Node" };

function object(namespace: string | undefined, name: string, ownerReferences?: OwnerReference[]): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Thing",
    metadata: { name, ...(namespace ? { namespace } : {}), ...(ownerReferences ? { ownerReferences } : {}) },
  };
}

function reference(overrides: Partial<OwnerReference> = {}): OwnerReference {
  return { ...owner, name: "box", uid: "u-1", controller: true, ...overrides };
}

/** The routes of a controller for Owner that owns Deployments and maps Nodes to "home/a" and "away/b". */
function routes(watchNamespaces?: string[]) {
  const ignored: string[] = [];
  const scope: NamespaceScope = {
    includes: (namespace) => watchNamespaces === undefined || watchNamespaces.includes(namespace ?? ""),
    ignored: (each, controller) =>
      ignored.push(`${controller}:${each.metadata.namespace}/${each.metadata.name}`),
  };
  const declaration: ControllerDeclaration = {
    name: "owner",
    for: owner,
    owns: [{ kind: child, labelSelector: "managed=yes" }],
    watches: [{ kind: other, map: () => ["home/a", "away/b"] }],
    reconcile: async () => undefined,
  };
  const [self, owned, watched] = eventRoutes(declaration, scope);
  if (self === undefined || owned === undefined || watched === undefined)
    throw new Error("three routes expected");
  return { self, owned, watched, ignored };
}

describe("a controller's event routes", () => {
  it("subscribe to the reconciled kind, each owned kind with its selector, and each watched kind", () => {
    const { self, owned, watched } = routes();
    expect([self.source, owned.source, watched.source]).toEqual([
      { kind: owner },
      { kind: child, labelSelector: "managed=yes" },
      { kind: other },
    ]);
  });

  it("enqueue a reconciled object's own key, and ignore (and report) one outside the namespaces", () => {
    const { self, ignored } = routes(["home"]);
    expect(self.keys(object("home", "box"), "update")).toEqual(["home/box"]);
    expect(self.keys(object("away", "box"), "add")).toEqual([]);
    expect(ignored).toEqual(["owner:away/box"]);
  });

  it("map an owned child to its controlling owner of the reconciled kind, and nothing else", () => {
    const { owned } = routes();
    expect(owned.keys(object("home", "box-web", [reference()]), "update")).toEqual(["home/box"]);
    expect(owned.keys(object("home", "box-web", [reference({ controller: false })]), "update")).toEqual([]);
    expect(owned.keys(object("home", "box-web", [reference({ kind: "Other" })]), "update")).toEqual([]);
    expect(
      owned.keys(object("home", "box-web", [reference({ apiVersion: "example.io/v2" })]), "add"),
    ).toEqual([]);
    expect(owned.keys(object("home", "orphan"), "delete")).toEqual([]);
  });

  it("pass a watched kind's event through its map, keeping only keys inside the namespaces", () => {
    expect(routes().watched.keys(object(undefined, "node-1"), "update")).toEqual(["home/a", "away/b"]);
    expect(routes(["home"]).watched.keys(object(undefined, "node-1"), "update")).toEqual(["home/a"]);
  });
});
