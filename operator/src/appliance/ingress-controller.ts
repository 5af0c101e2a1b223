/**
 * Where the cluster's ingress controller runs, for the gateway behind an Ingress: OpenClaw takes X-Forwarded-For only
 * from addresses it trusts, and the narrowest true answer is the controller's own pods, read from its Service's
 * EndpointSlices (k3s: kube-system/traefik). The operator watches them, so a rescheduled controller is trusted again
 * once its new address is in the gateway's config.
 */
import type { KubeObject } from "../runtime/kube-client.js";
import type { IngressProxies } from "./children/shared.js";

/** The ingress controller's Service: the chart's ingressController. */
export interface IngressControllerService {
  namespace: string;
  name: string;
}

/** "kube-system/traefik" → the Service; "" → none (the operator does not look). */
export function parseIngressControllerService(value: string): IngressControllerService | undefined {
  const trimmed = value.trim();
  if (trimmed === "") return undefined;
  const [namespace, name, ...rest] = trimmed.split("/");
  if (!namespace || !name || rest.length > 0)
    throw new Error(
      `ingress controller Service "${value}" is not <namespace>/<name>, e.g. kube-system/traefik`,
    );
  return { namespace, name };
}

/** The label Kubernetes gives each EndpointSlice of a Service. */
export function endpointSliceSelector(service: IngressControllerService): string {
  return `kubernetes.io/service-name=${service.name}`;
}

interface EndpointSliceLike {
  addressType?: string;
  endpoints?: { addresses?: string[] }[];
}

/**
 * Every pod address in the Service's slices, ready or not (a controller pod that is starting or terminating still
 * forwards requests), sorted so an unchanged set renders an unchanged config. FQDN slices hold no addresses.
 */
export function ingressProxiesOf(
  service: IngressControllerService,
  slices: readonly (KubeObject & EndpointSliceLike)[],
): IngressProxies {
  const addresses = new Set<string>();
  for (const slice of slices) {
    if (slice.addressType === "FQDN") continue;
    for (const endpoint of slice.endpoints ?? [])
      for (const address of endpoint.addresses ?? []) addresses.add(address);
  }
  return { service: `${service.namespace}/${service.name}`, addresses: [...addresses].sort() };
}
