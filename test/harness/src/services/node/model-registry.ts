/**
 * The model registry as the real node's pods reach it: a registry instance on the host end of the node's veth,
 * named in the cluster by a selector-less Service, so an Ollama pod pulls `model-registry.remram-testbed:<port>/…`
 * through CoreDNS and kube-proxy as it would pull from a registry on a box's LAN. Blob downloads are redirected to
 * the veth address itself: another host name than the Service's, which is what Ollama needs to follow a redirect.
 */
import { kubectl } from "../kubectl.js";
import { startModelRegistry } from "../model-registry.js";
import type { ModelRegistryEndpoints, OllamaEndpoints, Started, StartOptions } from "../types.js";
import { nodeNetwork } from "./config.js";

export const nodeRegistryService = { namespace: "remram-testbed", name: "model-registry" } as const;

/** The Namespace, the Service and its EndpointSlice pointing at the registry on the host's veth address. */
export function nodeRegistryManifests(port: number): object[] {
  const { namespace, name } = nodeRegistryService;
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace },
      spec: { ports: [{ name: "registry", port, targetPort: port, protocol: "TCP" }] },
    },
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: { name, namespace, labels: { "kubernetes.io/service-name": name } },
      addressType: "IPv4",
      endpoints: [{ addresses: [nodeNetwork.hostIp], conditions: { ready: true } }],
      ports: [{ name: "registry", port, protocol: "TCP" }],
    },
  ];
}

export interface StartNodeModelRegistryOptions extends StartOptions {
  ollama: OllamaEndpoints;
  /** Admin kubeconfig of the control plane the node joined. */
  kubeconfig: string;
}

/** Start the node's registry instance (seeded from the test bed's Ollama) and publish it in the cluster. */
export async function startNodeModelRegistry(
  options: StartNodeModelRegistryOptions,
): Promise<Started<ModelRegistryEndpoints>> {
  const { namespace, name } = nodeRegistryService;
  const registry = await startModelRegistry({
    ...options,
    listenAddress: nodeNetwork.hostIp,
    referenceHost: `${name}.${namespace}.svc.cluster.local`,
    blobHost: nodeNetwork.hostIp,
  });
  const port = Number(new URL(registry.endpoints.url).port);
  try {
    const list = { apiVersion: "v1", kind: "List", items: nodeRegistryManifests(port) };
    await kubectl(options.kubeconfig, ["apply", "--server-side", "-f", "-"], JSON.stringify(list));
  } catch (error) {
    await registry.stop();
    throw error;
  }
  return registry;
}
