/** The operator's settings, from its environment (the chart sets them); validated once at start. */
import { existsSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import type { OperatorImages } from "./appliance/children/shared.js";
import {
  type IngressControllerService,
  parseIngressControllerService,
} from "./appliance/ingress-controller.js";

const packageDir = join(dirname(fileURLToPath(import.meta.url)), "..");

/** Defaults follow hack/versions.env; the chart overrides them with the images it ships. */
export const defaultImages: OperatorImages = {
  opensearch: "opensearchproject/opensearch:2.19.1",
  ollama: "ollama/ollama:0.24.0",
  cortex: "remram/cortex:0.1.0",
  app: "remram/app:0.1.0",
  gateway: "remram/openclaw-gateway:2026.9.6",
  hooks: "remram/hooks:0.1.0",
  devicePlugin: "nvidia/k8s-device-plugin:v0.17.0",
};

const settings = z.object({
  POD_NAME: z.string().min(1).default("remram-operator-local"),
  POD_NAMESPACE: z.string().min(1).default("remram-system"),
  REMRAM_PROFILES_DIR: z.string().min(1).optional(),
  /** Comma-separated namespaces for appliances; empty = all (needs cluster-wide RBAC). */
  REMRAM_WATCH_NAMESPACES: z.string().default(""),
  /** Comma-separated namespaces whose Prometheus may scrape appliance metrics ports; empty = none. */
  REMRAM_METRICS_NAMESPACES: z.string().default(""),
  /** The ingress controller's Service, <namespace>/<name>, whose pods the gateway trusts behind an Ingress; "" = none. */
  REMRAM_INGRESS_CONTROLLER_SERVICE: z.string().default("kube-system/traefik"),
  REMRAM_PROBE_PORT: z.coerce.number().int().min(0).max(65535).default(8081),
  REMRAM_RESYNC_SECONDS: z.coerce.number().int().min(10).max(86_400).default(300),
  /** How often pending Cortex proposals (an explicit save's page among them) are mirrored between dream cycles. */
  REMRAM_PROPOSAL_MIRROR_SECONDS: z.coerce.number().int().min(1).max(3_600).default(10),
  /** How often each appliance's data is checked for consistency (Cortex's /admin/check). */
  REMRAM_CONSISTENCY_CHECK_SECONDS: z.coerce.number().int().min(60).max(604_800).default(21_600),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  REMRAM_IMAGE_OPENSEARCH: z.string().min(1).default(defaultImages.opensearch),
  REMRAM_IMAGE_OLLAMA: z.string().min(1).default(defaultImages.ollama),
  REMRAM_IMAGE_CORTEX: z.string().min(1).default(defaultImages.cortex),
  REMRAM_IMAGE_APP: z.string().min(1).default(defaultImages.app),
  REMRAM_IMAGE_GATEWAY: z.string().min(1).default(defaultImages.gateway),
  REMRAM_IMAGE_HOOKS: z.string().min(1).default(defaultImages.hooks),
  REMRAM_IMAGE_DEVICE_PLUGIN: z.string().min(1).default(defaultImages.devicePlugin),
  /**
   * Only for an operator running outside the cluster (the lab, `make demo`): where it reaches Cortex and Ollama
   * instead of their Service DNS names, which resolve only inside the cluster.
   */
  REMRAM_OUT_OF_CLUSTER_CORTEX_URL: z.url().optional(),
  REMRAM_OUT_OF_CLUSTER_OLLAMA_URL: z.url().optional(),
});

export interface OperatorSettings {
  identity: string;
  namespace: string;
  profilesDir: string;
  watchNamespaces?: string[];
  metricsNamespaces: string[];
  ingressController?: IngressControllerService;
  probePort: number;
  resyncMs: number;
  proposalMirrorMs: number;
  consistencyCheckMs: number;
  logLevel: string;
  images: OperatorImages;
  outOfClusterUrls: { cortex?: string; ollama?: string };
}

/** The profiles ship in the image at /etc/remram/hardware-profiles; from a checkout they are in the repo root. */
function defaultProfilesDir(): string {
  const inImage = "/etc/remram/hardware-profiles";
  return existsSync(inImage) ? inImage : join(packageDir, "..", "hardware-profiles");
}

function namespaceList(value: string): string[] {
  return value
    .split(",")
    .map((name) => name.trim())
    .filter((name) => name !== "");
}

function watchNamespaces(value: string): { watchNamespaces?: string[] } {
  const names = namespaceList(value);
  return names.length === 0 ? {} : { watchNamespaces: names };
}

export function loadSettings(env: NodeJS.ProcessEnv): OperatorSettings {
  const parsed = settings.safeParse(env);
  if (!parsed.success) throw new Error(`invalid operator settings: ${z.prettifyError(parsed.error)}`);
  const value = parsed.data;
  let ingressController: IngressControllerService | undefined;
  try {
    ingressController = parseIngressControllerService(value.REMRAM_INGRESS_CONTROLLER_SERVICE);
  } catch (error) {
    throw new Error(
      `invalid operator settings: REMRAM_INGRESS_CONTROLLER_SERVICE: ${(error as Error).message}`,
    );
  }
  return {
    identity: value.POD_NAME,
    namespace: value.POD_NAMESPACE,
    profilesDir: value.REMRAM_PROFILES_DIR ?? defaultProfilesDir(),
    ...watchNamespaces(value.REMRAM_WATCH_NAMESPACES),
    metricsNamespaces: namespaceList(value.REMRAM_METRICS_NAMESPACES),
    ...(ingressController === undefined ? {} : { ingressController }),
    probePort: value.REMRAM_PROBE_PORT,
    resyncMs: value.REMRAM_RESYNC_SECONDS * 1000,
    proposalMirrorMs: value.REMRAM_PROPOSAL_MIRROR_SECONDS * 1000,
    consistencyCheckMs: value.REMRAM_CONSISTENCY_CHECK_SECONDS * 1000,
    logLevel: value.LOG_LEVEL,
    images: {
      opensearch: value.REMRAM_IMAGE_OPENSEARCH,
      ollama: value.REMRAM_IMAGE_OLLAMA,
      cortex: value.REMRAM_IMAGE_CORTEX,
      app: value.REMRAM_IMAGE_APP,
      gateway: value.REMRAM_IMAGE_GATEWAY,
      hooks: value.REMRAM_IMAGE_HOOKS,
      devicePlugin: value.REMRAM_IMAGE_DEVICE_PLUGIN,
    },
    outOfClusterUrls: {
      ...(value.REMRAM_OUT_OF_CLUSTER_CORTEX_URL ? { cortex: value.REMRAM_OUT_OF_CLUSTER_CORTEX_URL } : {}),
      ...(value.REMRAM_OUT_OF_CLUSTER_OLLAMA_URL ? { ollama: value.REMRAM_OUT_OF_CLUSTER_OLLAMA_URL } : {}),
    },
  };
}
