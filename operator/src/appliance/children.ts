/**
 * Everything a RemramAppliance owns, one builder per component (children/). Each returns the objects exactly as the
 * operator applies them (server-side apply sends only these fields), so unit tests check the shape and the
 * reconciler checks convergence by comparing these against the live objects.
 */
import type { KubeObject } from "../runtime/kube-client.js";
import { buildRemramApp } from "./children/app.js";
import { buildCortex } from "./children/cortex.js";
import { buildGateway } from "./children/gateway.js";
import { buildNetworkPolicies } from "./children/network-policies.js";
import { buildOllama } from "./children/ollama.js";
import { buildOpenSearch } from "./children/opensearch.js";
import type { ApplianceContext } from "./children/shared.js";

export function buildApplianceChildren(ctx: ApplianceContext): KubeObject[] {
  return [
    ...buildOpenSearch(ctx),
    ...buildOllama(ctx),
    ...buildCortex(ctx),
    ...buildGateway(ctx),
    ...buildRemramApp(ctx),
    ...buildNetworkPolicies(ctx),
  ];
}

/**
 * Storage requests of existing claims stay as they are: a claim's size cannot shrink, growing it needs an
 * expandable StorageClass, and a StatefulSet's claim templates are immutable. A profile switch (say cpu-only →
 * moltbox-baseline when a GPU appears) must not turn into a rejected apply on every reconcile.
 */
export function keepLiveStorage(desired: KubeObject, live: KubeObject | undefined): KubeObject {
  if (live === undefined) return desired;
  type Claim = {
    metadata?: { name?: string };
    spec?: { storageClassName?: string; resources?: { requests?: { storage?: string } } };
  };
  const adopt = (claim: Claim, current: Claim | undefined): Claim => {
    const storage = current?.spec?.resources?.requests?.storage;
    if (storage === undefined || claim.spec === undefined) return claim;
    const storageClassName = current?.spec?.storageClassName;
    return {
      ...claim,
      spec: {
        ...claim.spec,
        resources: { ...claim.spec.resources, requests: { ...claim.spec.resources?.requests, storage } },
        ...(storageClassName !== undefined ? { storageClassName } : {}),
      },
    };
  };
  if (desired.kind === "PersistentVolumeClaim") {
    return adopt(desired as Claim, live as Claim) as KubeObject;
  }
  if (desired.kind === "StatefulSet") {
    const set = desired as KubeObject & { spec: { volumeClaimTemplates?: Claim[] } };
    const liveTemplates = (live as KubeObject & { spec?: { volumeClaimTemplates?: Claim[] } }).spec
      ?.volumeClaimTemplates;
    if (set.spec.volumeClaimTemplates === undefined || liveTemplates === undefined) return desired;
    return {
      ...set,
      spec: {
        ...set.spec,
        volumeClaimTemplates: set.spec.volumeClaimTemplates.map((template) =>
          adopt(
            template,
            liveTemplates.find((current) => current.metadata?.name === template.metadata?.name),
          ),
        ),
      },
    } as KubeObject;
  }
  return desired;
}
