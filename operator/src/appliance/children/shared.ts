import type { CallerName } from "@remram/contract";
/**
 * What every child builder shares: the context they build from, names and labels, the owner reference, the
 * restricted security contexts, and the plain Service, Secret and claim shapes.
 */
import type { SupportedChannel } from "../../api/v1alpha1/gateway-channels.js";
import type { RemramApplianceSpec } from "../../api/v1alpha1/remram-appliance.js";
import type { KubeObject, OwnerReference } from "../../runtime/kube-client.js";
import type { HardwareProfile } from "../hardware-profiles.js";
import { gatewayPort } from "../openclaw-config.js";

export const managedBy = "remram-operator";
export const applianceLabel = "remram.io/appliance";

export const ports = { opensearch: 9200, ollama: 11434, cortex: 8080, gateway: gatewayPort } as const;

export interface OperatorImages {
  opensearch: string;
  ollama: string;
  cortex: string;
  /** remram-app (app/Dockerfile). */
  app: string;
  gateway: string;
  hooks: string;
  devicePlugin: string;
}

export interface GeneratedSecrets {
  /** Each caller's Cortex credential, as generated (or kept from the live Secret). */
  cortexCredentials: Record<CallerName, string>;
  gatewayToken: string;
}

export interface ApplianceContext {
  name: string;
  namespace: string;
  owner: OwnerReference;
  spec: RemramApplianceSpec;
  profile: HardwareProfile;
  /** Ollama asks for a GPU (GPU found, or gpu: required). */
  useGpu: boolean;
  images: OperatorImages;
  secrets: GeneratedSecrets;
  /** Namespaces whose Prometheus may scrape the appliance's metrics ports (the chart's metrics.allowedNamespaces). */
  metricsNamespaces: readonly string[];
  /** The operator's own namespace: it lists and pulls the appliance's models through Ollama's API. */
  operatorNamespace: string;
  /**
   * The resourceVersion of spec.escalation.cloud's key Secret when it holds the key; undefined when there is no
   * cloud model or the key is missing (then nothing escalates). A new version rolls the gateway onto the new key.
   */
  cloudKeyVersion?: string;
  /** What keeps spec.backup's destination from Cortex (backup-destination.ts); Cortex gets none meanwhile. */
  backupDestinationProblem?: string;
  /** The external OpenSearch's credential and CA Secrets' versions: Cortex reads them at start, so a change restarts it. */
  opensearchSecretsVersion?: string;
  /**
   * The resourceVersion of each spec.gateway.channels token Secret that holds its key; a channel without one stays
   * out of the gateway's config (its pod would not start without the variable). A new version rolls the gateway.
   */
  channelTokenVersions?: Partial<Record<SupportedChannel, string>>;
  /** cert-manager's Certificate CRD is served: the Ingress's certificate can come from cert-manager. */
  certManagerInstalled?: boolean;
  /**
   * The ingress controller's pod addresses, from its Service's EndpointSlices (`service` is namespace/name);
   * undefined when the operator is not told where the controller is (the chart's ingressController).
   */
  ingressProxies?: IngressProxies;
}

export interface IngressProxies {
  service: string;
  addresses: readonly string[];
}

export function childName(appliance: string, component: string): string {
  return `${appliance}-${component}`;
}

export function selectorLabels(appliance: string, component: string): Record<string, string> {
  return { "app.kubernetes.io/name": component, "app.kubernetes.io/instance": appliance };
}

export function childLabels(appliance: string, component: string): Record<string, string> {
  return {
    ...selectorLabels(appliance, component),
    "app.kubernetes.io/part-of": "remram",
    "app.kubernetes.io/managed-by": managedBy,
    [applianceLabel]: appliance,
  };
}

/** A child's metadata: in the appliance's namespace, labelled, and controlled by the appliance. */
export function childMeta(ctx: ApplianceContext, component: string, name = childName(ctx.name, component)) {
  return {
    name,
    namespace: ctx.namespace,
    labels: childLabels(ctx.name, component),
    ownerReferences: [ctx.owner],
  };
}

/** Pod Security Standards "restricted", plus a read-only root file system where the image allows it. */
export function restrictedContainerSecurity(readOnlyRootFilesystem = true) {
  return {
    allowPrivilegeEscalation: false,
    capabilities: { drop: ["ALL"] },
    readOnlyRootFilesystem,
    runAsNonRoot: true,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

export function restrictedPodSecurity(uid: number) {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    fsGroup: uid,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

export function resourcesOf(resources: { cpu: string; memory: string }) {
  return { requests: { cpu: resources.cpu, memory: resources.memory }, limits: { memory: resources.memory } };
}

export function serviceUrl(
  ctx: Pick<ApplianceContext, "name" | "namespace">,
  component: keyof typeof ports,
): string {
  return `http://${childName(ctx.name, component)}.${ctx.namespace}.svc:${ports[component]}`;
}

export function childService(
  ctx: ApplianceContext,
  component: keyof typeof ports,
  headless = false,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMeta(ctx, component, childName(ctx.name, headless ? `${component}-headless` : component)),
    spec: {
      selector: selectorLabels(ctx.name, component),
      ports: [{ name: "http", port: ports[component], targetPort: "http" }],
      ...(headless ? { clusterIP: "None", publishNotReadyAddresses: true } : {}),
    },
  } as KubeObject;
}

export function childSecret(
  ctx: ApplianceContext,
  component: string,
  data: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: childMeta(ctx, component),
    type: "Opaque",
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, Buffer.from(value, "utf8").toString("base64")]),
    ),
  } as KubeObject;
}

export function childClaim(
  ctx: ApplianceContext,
  component: string,
  size: string,
  storageClassName: string | undefined,
): KubeObject {
  const retain = ctx.spec.persistentVolumeClaimRetentionPolicy.whenDeleted === "Retain";
  const metadata = childMeta(ctx, component);
  return {
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    // A retained claim carries no ownerReference, so deleting the appliance leaves the data behind.
    metadata: retain ? { ...metadata, ownerReferences: undefined } : metadata,
    spec: {
      accessModes: ["ReadWriteOnce"],
      resources: { requests: { storage: size } },
      ...(storageClassName ? { storageClassName } : {}),
    },
  } as KubeObject;
}
