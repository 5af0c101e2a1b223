// The ApplianceContext the builders' unit tests start from: appliance "box" in "home", the baseline profile.
// Test support only (excluded from the operator's build, as hooks/src/testing is from the plugin's).
import { join } from "node:path";
import { remramApplianceSpec } from "../../api/v1alpha1/remram-appliance.js";
import { defaultImages } from "../../config.js";
import { buildGateway } from "../children/gateway.js";
import type { ApplianceContext } from "../children/shared.js";
import { loadHardwareProfiles } from "../hardware-profiles.js";

export const profiles = loadHardwareProfiles(join(import.meta.dirname, "../../../../hardware-profiles"));

/** The images the operator defaults to (the chart overrides them). */
export const images = defaultImages;

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
    secrets: {
      cortexCredentials: {
        gateway: "cortex-gateway-secret",
        operator: "cortex-operator-secret",
        admin: "cortex-admin-secret",
        app: "cortex-app-secret",
      },
      gatewayToken: "gateway-secret",
    },
    metricsNamespaces: ["monitoring"],
    operatorNamespace: "remram-system",
    ...overrides,
  };
}

/** The openclaw.json the operator seeds into the gateway pod of a CPU-only box with this spec (from its Secret). */
export function gatewayConfigFor(
  specInput: unknown,
  overrides: Partial<ApplianceContext> = {},
): Record<string, unknown> {
  const secret = buildGateway(applianceContext(specInput, { useGpu: false, ...overrides })).find(
    (child) => child.kind === "Secret",
  ) as unknown as { data: Record<string, string> } | undefined;
  const encoded = secret?.data["openclaw.json"];
  if (encoded === undefined) throw new Error("the gateway's Secret holds no openclaw.json");
  return JSON.parse(Buffer.from(encoded, "base64").toString("utf8")) as Record<string, unknown>;
}
