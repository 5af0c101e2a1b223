/** Owner references: the controller ref every child carries, and the way back from a child to its owner's key. */
import type { KubeObject, OwnerReference } from "./kube-client.js";

/** The one `controller: true` reference a child carries; blockOwnerDeletion lets foreground deletion wait for it. */
export function controllerReference(owner: KubeObject): OwnerReference {
  if (owner.metadata.uid === undefined)
    throw new Error(`${owner.kind} ${owner.metadata.name} has no uid yet`);
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

export function objectKey(namespace: string | undefined, name: string): string {
  return namespace === undefined || namespace === "" ? name : `${namespace}/${name}`;
}

export function splitKey(key: string): { namespace: string; name: string } {
  const slash = key.indexOf("/");
  if (slash < 0) return { namespace: "", name: key };
  return { namespace: key.slice(0, slash), name: key.slice(slash + 1) };
}

/** The key of the object's controlling owner of `kind` (owners share the child's namespace by design). */
export function controllerOwnerKey(
  child: { metadata?: { namespace?: string; ownerReferences?: OwnerReference[] } },
  apiVersion: string,
  kind: string,
): string | undefined {
  const owner = child.metadata?.ownerReferences?.find(
    (reference) =>
      reference.controller === true && reference.kind === kind && reference.apiVersion === apiVersion,
  );
  return owner === undefined ? undefined : objectKey(child.metadata?.namespace, owner.name);
}
