/**
 * Deleting children the spec no longer wants (remram-app switched off): each one that is there and this appliance's
 * own, read from the child caches where there is one. A child the appliance does not own is never touched.
 */
import type { Cache } from "../runtime/cache.js";
import { type KubeClient, type KubeObject, resourcePath } from "../runtime/kube-client.js";
import type { ApplianceContext } from "./children/shared.js";

export interface Leftover {
  apiVersion: string;
  kind: string;
  name: string;
}

export async function deleteLeftovers(
  client: Pick<KubeClient, "get" | "delete">,
  children: (kind: string) => Cache<KubeObject> | undefined,
  ctx: Pick<ApplianceContext, "namespace" | "owner">,
  leftovers: readonly Leftover[],
): Promise<void> {
  for (const leftover of leftovers) {
    const path = resourcePath(leftover.apiVersion, leftover.kind, ctx.namespace, leftover.name);
    const cache = children(leftover.kind);
    const live = cache ? cache.get(ctx.namespace, leftover.name) : await client.get<KubeObject>(path);
    if (live?.metadata.ownerReferences?.some((owner) => owner.uid === ctx.owner.uid))
      await client.delete(path);
  }
}
