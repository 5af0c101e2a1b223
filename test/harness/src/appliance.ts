// What a user on the box writes to run the appliance on the test bed's real node: the chart's values with the
// images built here, namespaces the node's admission places there, and a RemramAppliance whose models come from
// the test bed's registry. Shared by the real-node suite and `make demo`.
import type { ModelRegistryEndpoints, RealNodeEndpoints } from "./services/types.js";

const imageParts = (image: string) => ({
  repository: image.slice(0, image.lastIndexOf(":")),
  tag: image.slice(image.lastIndexOf(":") + 1),
});

/** The chart's values: the operator and every operand from the node's containerd, never pulled. */
export function operatorChartValues(node: RealNodeEndpoints, applianceNamespaces: readonly string[]) {
  const images = node.images.app;
  return {
    image: { ...imageParts(images.operator), pullPolicy: "Never" },
    applianceNamespaces,
    operandImages: {
      opensearch: images.opensearch,
      ollama: images.ollama,
      cortex: images.cortex,
      app: images.app,
      gateway: images.gateway,
      hooks: images.hooks,
      devicePlugin: "nvidia/k8s-device-plugin:v0.17.0",
    },
  };
}

/** A namespace whose pods the apiserver places on the real node; the appliance's enforces restricted security. */
export function nodeNamespace(node: RealNodeEndpoints, name: string, restricted: boolean) {
  return {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: {
      name,
      labels: restricted ? { "pod-security.kubernetes.io/enforce": "restricted" } : {},
      annotations: node.namespaceAnnotations,
    },
  };
}

/**
 * The appliance, with the models named by the box's registry. SmolLM2's window is 8k tokens: the gateway gets that
 * window, a short reply cap and the one `read` tool, so a turn's prompt (about 4.6k tokens) fits and a 2-core box
 * answers in about a minute. Reflection, and a second agent `reader`, run on the few-shot SmolLM2
 * (TestbedModels.fewshotModel): what a person tells is reflected into Cortex as they said it, and `reader` calls
 * its read tool on the path it is given, so the knowledge loop and tool capture can be checked end to end.
 */
export function testbedAppliance(name: string, namespace: string, registry: ModelRegistryEndpoints) {
  return {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name, namespace },
    spec: {
      hardwareProfile: "auto",
      opensearch: { mode: "embedded" },
      ollama: {
        gpu: "auto",
        models: {
          embedding: registry.embedModel,
          routing: registry.chatModel,
          reflection: registry.fewshotModel,
        },
        contextWindow: 8192,
        maxOutputTokens: 256,
        // The test bed's registry speaks plain HTTP, as a model mirror on a home LAN may.
        insecureRegistries: [new URL(registry.url).host],
      },
      gateway: {
        tools: { allow: ["read"] },
        agents: [{ id: "main" }, { id: "reader", model: registry.fewshotModel }],
      },
      workspace: { gitIdentity: { name: "Moltbox", email: "moltbox@home.arpa" } },
    },
  };
}

/**
 * The gateway's Service address and bearer token, as a channel or client on the box would use them. `kubectl`
 * runs kubectl with the given arguments and returns its output (sync or async).
 */
export async function gatewayServiceAccess(
  kubectl: (args: string[]) => string | Promise<string>,
  namespace: string,
  appliance: string,
): Promise<{ url: string; token: string }> {
  const get = (kind: string, name: string, jsonpath: string) =>
    kubectl(["-n", namespace, "get", kind, name, "-o", `jsonpath=${jsonpath}`]);
  const ip = await get("service", `${appliance}-gateway`, "{.spec.clusterIP}");
  const token = await get("secret", `${appliance}-gateway-config`, "{.data.token}");
  return { url: `http://${ip}:18789`, token: Buffer.from(token, "base64").toString("utf8") };
}
