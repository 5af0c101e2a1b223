// The ApplianceContext the builders' unit tests start from: appliance "box" in "home", the baseline profile.
// Test support only (excluded from the operator's build, as hooks/src/testing is from the plugin's).
import { join } from "node:path";
import { remramApplianceSpec } from "../../api/v1alpha1/remram-appliance.js";
import { type ApplianceContext, buildGateway, type OperatorImages } from "../children.js";
import { loadHardwareProfiles } from "../hardware-profiles.js";

export const profiles = loadHardwareProfiles(join(import.meta.dirname, "../../../../hardware-profiles"));

export const images: OperatorImages = {
  opensearch: "opensearchproject/opensearch:2.19.1",
  ollama: "ollama/ollama:0.24.0",
  cortex: "remram/cortex:0.1.0",
  gateway: "remram/openclaw-gateway:2026.9.6",
  hooks: "remram/hooks:0.1.0",
  devicePlugin: "nvidia/k8s-device-plugin:v0.17.0",
};

export function applianceContext(
  specInput: unknown,
  overrides: Partial<ApplianceContext> = {},
): ApplianceContext {
  const profile = profiles.get("moltbox-baseline");
  if (profile === undefined) throw new Error("baseline profile missing");
  return {
    name: "box",
    namespace: "home",
    owner: {
      apiVersion: "remram.io/v1alpha1",
      kind: "RemramAppliance",
      name: "box",
      uid: "u-1",
      controller: true,
    },
    spec: remramApplianceSpec.parse(specInput),
    profile,
    useGpu: true,
    images,
    secrets: { cortexToken: "cortex-secret", gatewayToken: "gateway-secret" },
    metricsNamespaces: ["monitoring"],
    operatorNamespace: "remram-system",
    ...overrides,
  };
}

/** The openclaw.json the operator seeds into the gateway pod of a CPU-only box with this spec (from its Secret). */
export function gatewayConfigFor(specInput: unknown): Record<string, unknown> {
  const secret = buildGateway(applianceContext(specInput, { useGpu: false })).find(
    (child) => child.kind === "Secret",
  ) as unknown as { data: Record<string, string> } | undefined;
  const encoded = secret?.data["openclaw.json"];
  if (encoded === undefined) throw new Error("the gateway's Secret holds no openclaw.json");
  return JSON.parse(Buffer.from(encoded, "base64").toString("utf8")) as Record<string, unknown>;
}
