/**
 * Pure builders for everything a RemramAppliance owns. Each returns the object exactly as the operator applies it
 * (server-side apply sends only these fields), so unit tests check the shape and the reconciler checks convergence
 * by comparing these against the live objects.
 */
import { createHash } from "node:crypto";
import { basename, dirname } from "node:path";
import type { ModelRole, RemramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import type { KubeObject, OwnerReference } from "../runtime/kube-client.js";
import { runtimeClassNameOf } from "./gpu.js";
import { type HardwareProfile, quantityToMiB } from "./hardware-profiles.js";
import { repairDownloadsContainer } from "./ollama-downloads.js";
import {
  agentWorkspaces,
  buildOpenClawConfig,
  gatewayAgents,
  gatewayArtifactsFolder,
  gatewayCortexTokenFile,
  gatewayPort,
  gatewayWorkspaceDir,
  hooksMetricsPort,
  hooksPluginDir,
  hooksVolumeDir,
} from "./openclaw-config.js";

export const managedBy = "remram-operator";
export const applianceLabel = "remram.io/appliance";
export const configHashAnnotation = "remram.io/config-hash";

export const ports = { opensearch: 9200, ollama: 11434, cortex: 8080, gateway: gatewayPort } as const;

export interface OperatorImages {
  opensearch: string;
  ollama: string;
  cortex: string;
  gateway: string;
  hooks: string;
  devicePlugin: string;
}

export interface GeneratedSecrets {
  cortexToken: string;
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

function meta(ctx: ApplianceContext, component: string, name = childName(ctx.name, component)) {
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

function restrictedPodSecurity(uid: number) {
  return {
    runAsNonRoot: true,
    runAsUser: uid,
    runAsGroup: uid,
    fsGroup: uid,
    seccompProfile: { type: "RuntimeDefault" },
  };
}

function resourcesOf(resources: { cpu: string; memory: string }) {
  return { requests: { cpu: resources.cpu, memory: resources.memory }, limits: { memory: resources.memory } };
}

export function serviceUrl(
  ctx: Pick<ApplianceContext, "name" | "namespace">,
  component: keyof typeof ports,
): string {
  return `http://${childName(ctx.name, component)}.${ctx.namespace}.svc:${ports[component]}`;
}

function service(ctx: ApplianceContext, component: keyof typeof ports, headless = false): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: meta(ctx, component, childName(ctx.name, headless ? `${component}-headless` : component)),
    spec: {
      selector: selectorLabels(ctx.name, component),
      ports: [{ name: "http", port: ports[component], targetPort: "http" }],
      ...(headless ? { clusterIP: "None", publishNotReadyAddresses: true } : {}),
    },
  } as KubeObject;
}

function base64(value: string): string {
  return Buffer.from(value, "utf8").toString("base64");
}

function hashOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

function pvc(
  ctx: ApplianceContext,
  component: string,
  size: string,
  storageClassName: string | undefined,
): KubeObject {
  const retain = ctx.spec.persistentVolumeClaimRetentionPolicy.whenDeleted === "Retain";
  const metadata = meta(ctx, component);
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

// --- OpenSearch -----------------------------------------------------------------------------------------------

/** The init container reads the host's vm.max_map_count (not namespaced) into its termination message. */
export const hostCheckContainer = "host-check";

export function buildOpenSearch(ctx: ApplianceContext): KubeObject[] {
  if (ctx.spec.opensearch.mode === "external") return [];
  const profile = ctx.profile.opensearch;
  const heapMiB = ctx.spec.opensearch.heap
    ? quantityToMiB(ctx.spec.opensearch.heap)
    : Math.floor(quantityToMiB(profile.resources.memory) / 2);
  const storage = ctx.spec.opensearch.storage ?? { size: profile.storage };
  const retain = ctx.spec.persistentVolumeClaimRetentionPolicy.whenDeleted;
  const statefulSet = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: meta(ctx, "opensearch"),
    spec: {
      serviceName: childName(ctx.name, "opensearch-headless"),
      replicas: 1,
      selector: { matchLabels: selectorLabels(ctx.name, "opensearch") },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: retain, whenScaled: "Retain" },
      template: {
        metadata: { labels: childLabels(ctx.name, "opensearch") },
        spec: {
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(1000),
          initContainers: [
            {
              name: hostCheckContainer,
              image: ctx.images.opensearch,
              command: ["sh", "-c", "cat /proc/sys/vm/max_map_count > /dev/termination-log"],
              securityContext: restrictedContainerSecurity(),
              resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { memory: "64Mi" } },
            },
          ],
          containers: [
            {
              name: "opensearch",
              image: ctx.spec.opensearch.image ?? ctx.images.opensearch,
              env: [
                { name: "cluster.name", value: ctx.name },
                { name: "discovery.type", value: "single-node" },
                { name: "bootstrap.memory_lock", value: "false" },
                { name: "OPENSEARCH_JAVA_OPTS", value: `-Xms${heapMiB}m -Xmx${heapMiB}m` },
                // Plain HTTP inside the namespace; the NetworkPolicy admits only Cortex on 9200.
                { name: "DISABLE_SECURITY_PLUGIN", value: "true" },
                { name: "DISABLE_INSTALL_DEMO_CONFIG", value: "true" },
              ],
              ports: [{ name: "http", containerPort: ports.opensearch }],
              readinessProbe: {
                httpGet: { path: "/_cluster/health?local=true", port: "http" },
                periodSeconds: 10,
                failureThreshold: 6,
              },
              resources: resourcesOf(profile.resources),
              // OpenSearch writes logs and keystore under its install dir; the root file system stays writable.
              securityContext: restrictedContainerSecurity(false),
              volumeMounts: [{ name: "data", mountPath: "/usr/share/opensearch/data" }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data", labels: childLabels(ctx.name, "opensearch") },
          spec: {
            accessModes: ["ReadWriteOnce"],
            resources: { requests: { storage: storage.size } },
            ...(storage.storageClassName ? { storageClassName: storage.storageClassName } : {}),
          },
        },
      ],
    },
  };
  return [statefulSet as unknown as KubeObject, service(ctx, "opensearch"), service(ctx, "opensearch", true)];
}

// --- Ollama ---------------------------------------------------------------------------------------------------

export const gpuResource = "nvidia.com/gpu";

export function buildOllama(ctx: ApplianceContext): KubeObject[] {
  const profile = ctx.profile.ollama;
  const storage = ctx.spec.ollama.storage ?? { size: profile.storage };
  const resources = resourcesOf(profile.resources);
  const ollamaImage = ctx.spec.ollama.image ?? ctx.images.ollama;
  const gpuPod = ctx.useGpu
    ? {
        runtimeClassName: runtimeClassNameOf(ctx.spec),
        tolerations: [{ key: gpuResource, operator: "Exists", effect: "NoSchedule" }],
      }
    : {};
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(ctx, "ollama"),
    spec: {
      replicas: 1,
      // One GPU and a ReadWriteOnce models volume: the old pod must go before the new one starts.
      strategy: { type: "Recreate" },
      selector: { matchLabels: selectorLabels(ctx.name, "ollama") },
      template: {
        metadata: { labels: childLabels(ctx.name, "ollama") },
        spec: {
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(1000),
          ...gpuPod,
          initContainers: [repairDownloadsContainer(ollamaImage, "/models", restrictedContainerSecurity())],
          containers: [
            {
              name: "ollama",
              image: ollamaImage,
              env: [
                { name: "OLLAMA_HOST", value: `0.0.0.0:${ports.ollama}` },
                { name: "OLLAMA_MODELS", value: "/models" },
                { name: "HOME", value: "/tmp" },
              ],
              ports: [{ name: "http", containerPort: ports.ollama }],
              readinessProbe: { httpGet: { path: "/api/version", port: "http" }, periodSeconds: 10 },
              resources: ctx.useGpu
                ? { requests: resources.requests, limits: { ...resources.limits, [gpuResource]: "1" } }
                : resources,
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "models", mountPath: "/models" },
                { name: "tmp", mountPath: "/tmp" },
              ],
            },
          ],
          volumes: [
            { name: "models", persistentVolumeClaim: { claimName: childName(ctx.name, "ollama-models") } },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
    },
  };
  return [
    pvc(ctx, "ollama-models", storage.size, storage.storageClassName),
    deployment as unknown as KubeObject,
    service(ctx, "ollama"),
  ];
}

/** The models of each role: the spec's choice, else the profile's. */
export function requiredModels(ctx: Pick<ApplianceContext, "spec" | "profile">) {
  const chosen = ctx.spec.ollama.models;
  const fallback = ctx.profile.ollama.models;
  return {
    routing: chosen.routing ?? fallback.routing,
    reflection: chosen.reflection ?? fallback.reflection,
    embedding: chosen.embedding ?? fallback.embedding,
  };
}

/**
 * Every model Ollama must hold, by role: the three roles, then each model an agent of spec.gateway.agents names
 * that no role names already (a gateway run on an agent whose model was never pulled fails at its first turn).
 */
export function requiredModelList(
  ctx: Pick<ApplianceContext, "spec" | "profile">,
): { role: ModelRole; name: string }[] {
  const byRole = requiredModels(ctx);
  const roles = (["routing", "reflection", "embedding"] as const).map((role) => ({
    role,
    name: byRole[role],
  }));
  const named = new Set(roles.map((model) => model.name));
  const agentModels = gatewayAgents(ctx.spec.gateway).flatMap((agent) =>
    agent.model !== undefined && !named.has(agent.model) ? [agent.model] : [],
  );
  return [...roles, ...[...new Set(agentModels)].map((name) => ({ role: "agent" as const, name }))];
}

// --- Cortex ---------------------------------------------------------------------------------------------------

export const cortexTokenKey = "token";

export function cortexTokenSecretName(ctx: Pick<ApplianceContext, "name" | "spec">): {
  name: string;
  key: string;
} {
  return ctx.spec.cortex.tokenSecretRef ?? { name: childName(ctx.name, "cortex-token"), key: cortexTokenKey };
}

function secret(ctx: ApplianceContext, component: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: meta(ctx, component),
    type: "Opaque",
    data: Object.fromEntries(Object.entries(data).map(([key, value]) => [key, base64(value)])),
  } as KubeObject;
}

function opensearchUrl(ctx: ApplianceContext): string {
  return ctx.spec.opensearch.external?.url ?? serviceUrl(ctx, "opensearch");
}

/**
 * Cortex's own folder on the workspace claim (subPath `cortex`), apart from the agent's workspace (subPath
 * `workspace`): the git repository promoted artifacts are committed to, and the hash-addressed archive. Cortex's
 * root file system is read-only, so every path it writes is named here or lies on an emptyDir (HOME, /tmp).
 */
export const cortexDataDir = "/data/cortex";
export const cortexRepoDir = `${cortexDataDir}/repo`;
export const cortexArchiveDir = `${cortexDataDir}/archive`;
/** Cortex writes artifacts under `artifacts/` of its repository (maturationPlugin's default artifactsDir). */
export const cortexArtifactsSubPath = "cortex/repo/artifacts";
/** HOME for Cortex's git (it reads ~/.gitconfig; the image's user has no home on the read-only root). */
export const cortexHomeDir = "/home/cortex";

export function buildCortex(ctx: ApplianceContext): KubeObject[] {
  const token = cortexTokenSecretName(ctx);
  const models = requiredModels(ctx);
  const workspace = ctx.spec.workspace;
  const credentials = ctx.spec.opensearch.external?.credentialsSecretRef;
  const env = [
    { name: "CORTEX_PORT", value: String(ports.cortex) },
    { name: "CORTEX_TOKEN_FILE", value: "/var/run/secrets/remram/cortex/token" },
    { name: "REMRAM_OPENSEARCH_URL", value: opensearchUrl(ctx) },
    ...(credentials
      ? [{ name: "REMRAM_OPENSEARCH_CREDENTIALS_DIR", value: "/var/run/secrets/remram/opensearch" }]
      : []),
    { name: "REMRAM_OLLAMA_URL", value: serviceUrl(ctx, "ollama") },
    { name: "REMRAM_EMBED_MODEL", value: models.embedding },
    { name: "REMRAM_WORKSPACE_DIR", value: cortexRepoDir },
    { name: "CORTEX_ARCHIVE_DIR", value: cortexArchiveDir },
    { name: "HOME", value: cortexHomeDir },
    { name: "TMPDIR", value: "/tmp" },
    { name: "REMRAM_TOP_K", value: String(ctx.spec.cortex.retrieval.topK) },
    ...(workspace.gitIdentity
      ? [
          { name: "GIT_AUTHOR_NAME", value: workspace.gitIdentity.name },
          { name: "GIT_AUTHOR_EMAIL", value: workspace.gitIdentity.email },
          { name: "GIT_COMMITTER_NAME", value: workspace.gitIdentity.name },
          { name: "GIT_COMMITTER_EMAIL", value: workspace.gitIdentity.email },
        ]
      : []),
  ];
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(ctx, "cortex"),
    spec: {
      replicas: 1,
      // Cortex holds its git repository and archive; two writers must never overlap.
      strategy: { type: "Recreate" },
      selector: { matchLabels: selectorLabels(ctx.name, "cortex") },
      template: {
        metadata: { labels: childLabels(ctx.name, "cortex") },
        spec: {
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(1000),
          containers: [
            {
              name: "cortex",
              image: ctx.spec.cortex.image ?? ctx.images.cortex,
              env,
              ports: [{ name: "http", containerPort: ports.cortex }],
              readinessProbe: { httpGet: { path: "/readyz", port: "http" }, periodSeconds: 10 },
              livenessProbe: {
                httpGet: { path: "/healthz", port: "http" },
                periodSeconds: 20,
                failureThreshold: 6,
              },
              resources: resourcesOf(ctx.profile.cortex.resources),
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "token", mountPath: "/var/run/secrets/remram/cortex", readOnly: true },
                ...(credentials
                  ? [
                      {
                        name: "opensearch-credentials",
                        mountPath: "/var/run/secrets/remram/opensearch",
                        readOnly: true,
                      },
                    ]
                  : []),
                // Its own folder on the claim, never the agent's workspace (the gateway sees only artifacts/).
                { name: "workspace", mountPath: cortexDataDir, subPath: "cortex" },
                { name: "home", mountPath: cortexHomeDir },
                { name: "tmp", mountPath: "/tmp" },
              ],
            },
          ],
          volumes: [
            { name: "token", secret: { secretName: token.name, items: [{ key: token.key, path: "token" }] } },
            ...(credentials
              ? [{ name: "opensearch-credentials", secret: { secretName: credentials.name } }]
              : []),
            { name: "workspace", persistentVolumeClaim: { claimName: childName(ctx.name, "workspace") } },
            { name: "home", emptyDir: {} },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
    },
  };
  const workspaceStorage = ctx.spec.workspace.storage ?? { size: ctx.profile.workspace.storage };
  return [
    ...(ctx.spec.cortex.tokenSecretRef
      ? []
      : [secret(ctx, "cortex-token", { [cortexTokenKey]: ctx.secrets.cortexToken })]),
    pvc(ctx, "workspace", workspaceStorage.size, workspaceStorage.storageClassName),
    deployment as unknown as KubeObject,
    service(ctx, "cortex"),
  ];
}

// --- OpenClaw gateway -----------------------------------------------------------------------------------------

/**
 * Copies the plugin from the hooks image into the gateway pod's "hooks" emptyDir, at mode 0755 (see hooksPluginDir).
 * Runs again over the last copy when the pod restarts in place (the emptyDir outlives a node's kubelet and
 * containerd restart), so it starts from an empty folder: `mkdir` alone failed there and the gateway never came back.
 */
export function hooksPluginInitContainer(image: string) {
  return {
    name: "hooks-plugin",
    image,
    command: [
      "sh",
      "-c",
      `rm -rf ${hooksPluginDir} && mkdir -m 0755 ${hooksPluginDir} && cp -R /plugin/. ${hooksPluginDir}/`,
    ],
    securityContext: restrictedContainerSecurity(),
    volumeMounts: [{ name: "hooks", mountPath: hooksVolumeDir }],
  };
}

/**
 * The spec's retrieve cap, else one for the hardware: 250 ms with a GPU; 2 s on the CPU fallback, where a query's
 * embedding waits behind the chat model's tokens in Ollama (0.1-0.5 s measured on the 2-core test bed, the 250 ms
 * cap missed about one retrieval in three) and a turn takes tens of seconds anyway.
 */
export function retrieveTimeoutMs(ctx: Pick<ApplianceContext, "spec" | "useGpu">): number {
  return ctx.spec.cortex.retrieval.timeoutMs ?? (ctx.useGpu ? 250 : 2000);
}

export function buildGateway(ctx: ApplianceContext): KubeObject[] {
  const config = buildOpenClawConfig({
    gateway: ctx.spec.gateway,
    models: requiredModels(ctx),
    generation: {
      contextWindow: ctx.spec.ollama.contextWindow,
      maxOutputTokens: ctx.spec.ollama.maxOutputTokens,
    },
    ollamaUrl: `http://${childName(ctx.name, "ollama")}:${ports.ollama}`,
    cortexUrl: serviceUrl(ctx, "cortex"),
    tokenBudget: ctx.spec.cortex.retrieval.tokenBudget,
    retrieveTimeoutMs: retrieveTimeoutMs(ctx),
    gatewayToken: ctx.secrets.gatewayToken,
    household: ctx.spec.household,
  });
  const cortexToken = cortexTokenSecretName(ctx);
  const configJson = `${JSON.stringify(config, null, 2)}\n`;
  const stateDir = "/home/node/.openclaw";
  const channelMounts = (ctx.spec.gateway.channelSecretRefs ?? []).map((channel) => ({
    volume: { name: `channel-${channel.channel}`, secret: { secretName: channel.secretRef.name } },
    mount: {
      name: `channel-${channel.channel}`,
      mountPath: `/var/run/secrets/remram/channels/${channel.channel}`,
      readOnly: true,
    },
  }));
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: meta(ctx, "gateway"),
    spec: {
      replicas: 1,
      strategy: { type: "Recreate" },
      selector: { matchLabels: selectorLabels(ctx.name, "gateway") },
      template: {
        metadata: {
          labels: childLabels(ctx.name, "gateway"),
          // A changed openclaw.json rolls the pod so the init container seeds the new file.
          annotations: { [configHashAnnotation]: hashOf(configJson) },
        },
        spec: {
          // OpenClaw's owner lease in the state volume names the host it runs on; a replacement pod under another
          // name cannot tell the old process is gone and crash-loops until the lease's 5-minute TTL runs out.
          hostname: childName(ctx.name, "gateway"),
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(1000),
          initContainers: [
            {
              // OpenClaw rewrites its config by atomic rename, so it needs a regular file, not a Secret symlink.
              name: "seed-config",
              image: ctx.spec.gateway.image ?? ctx.images.gateway,
              command: [
                "sh",
                "-c",
                `mkdir -p ${stateDir} && cp /etc/remram/gateway/openclaw.json ${stateDir}/openclaw.json`,
              ],
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "config", mountPath: "/etc/remram/gateway", readOnly: true },
                { name: "state", mountPath: stateDir, subPath: "openclaw" },
              ],
            },
            hooksPluginInitContainer(ctx.images.hooks),
          ],
          containers: [
            {
              name: "gateway",
              image: ctx.spec.gateway.image ?? ctx.images.gateway,
              args: ["gateway", "run"],
              env: [
                { name: "HOME", value: "/home/node" },
                { name: "OPENCLAW_CONFIG_PATH", value: `${stateDir}/openclaw.json` },
                ...(channelMounts.length === 0 ? [{ name: "OPENCLAW_SKIP_CHANNELS", value: "1" }] : []),
              ],
              ports: [
                { name: "http", containerPort: ports.gateway },
                { name: "metrics", containerPort: hooksMetricsPort },
              ],
              readinessProbe: {
                httpGet: { path: "/readyz", port: "http" },
                periodSeconds: 10,
                failureThreshold: 12,
              },
              livenessProbe: {
                httpGet: { path: "/healthz", port: "http" },
                periodSeconds: 20,
                failureThreshold: 6,
              },
              resources: resourcesOf(ctx.profile.gateway.resources),
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "state", mountPath: stateDir, subPath: "openclaw" },
                { name: "state", mountPath: gatewayWorkspaceDir, subPath: "workspace" },
                // Promoted artifacts, read-only, in every agent's workspace: an agent reads what was approved and
                // changes none of it, and sees nothing else of Cortex's repository (history, proposals' journal)
                // or archive.
                ...agentWorkspaces(ctx.spec.gateway).map(({ workspace }) => ({
                  name: "state",
                  mountPath: `${workspace}/${gatewayArtifactsFolder}`,
                  subPath: cortexArtifactsSubPath,
                  readOnly: true,
                })),
                { name: "hooks", mountPath: hooksVolumeDir, readOnly: true },
                { name: "cortex-token", mountPath: dirname(gatewayCortexTokenFile), readOnly: true },
                { name: "tmp", mountPath: "/tmp" },
                // OpenClaw refuses a temp dir others may write (an emptyDir /tmp has no sticky bit) and falls back
                // to ~/.cache, which the read-only root file system would refuse.
                { name: "cache", mountPath: "/home/node/.cache" },
                ...channelMounts.map((channel) => channel.mount),
              ],
            },
          ],
          volumes: [
            { name: "config", secret: { secretName: childName(ctx.name, "gateway-config") } },
            // Gateway state, the agent's workspace and Cortex's folder share one claim, each in a subPath of its own.
            { name: "state", persistentVolumeClaim: { claimName: childName(ctx.name, "workspace") } },
            { name: "hooks", emptyDir: {} },
            {
              name: "cortex-token",
              secret: {
                secretName: cortexToken.name,
                items: [{ key: cortexToken.key, path: basename(gatewayCortexTokenFile) }],
              },
            },
            { name: "tmp", emptyDir: {} },
            { name: "cache", emptyDir: {} },
            ...channelMounts.map((channel) => channel.volume),
          ],
        },
      },
    },
  };
  return [
    secret(ctx, "gateway-config", { "openclaw.json": configJson, token: ctx.secrets.gatewayToken }),
    deployment as unknown as KubeObject,
    service(ctx, "gateway"),
  ];
}

// --- NetworkPolicies ------------------------------------------------------------------------------------------

/**
 * The label of the Remram app (the user and governance surface: knowledge inspection, artifact review), which is
 * not part of this repository: a pod carrying it in the appliance's namespace may call Cortex's API.
 */
export const remramAppLabels = { "app.kubernetes.io/name": "remram-app" } as const;

function namespacePeer(namespace: string) {
  return { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } } };
}

/** Default-deny ingress for the appliance's pods, then only the paths the architecture needs. */
export function buildNetworkPolicies(ctx: ApplianceContext): KubeObject[] {
  const policy = (component: string, spec: Record<string, unknown>): KubeObject =>
    ({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: meta(ctx, component, childName(ctx.name, component)),
      spec,
    }) as KubeObject;
  const from = (...components: string[]) =>
    components.map((component) => ({ podSelector: { matchLabels: selectorLabels(ctx.name, component) } }));
  const allow = (target: keyof typeof ports, sources: Record<string, unknown>[]) =>
    policy(`allow-${target}`, {
      podSelector: { matchLabels: selectorLabels(ctx.name, target) },
      policyTypes: ["Ingress"],
      ingress: [{ ...(sources.length > 0 ? { from: sources } : {}), ports: [{ port: ports[target] }] }],
    });
  return [
    policy("default-deny", {
      podSelector: { matchLabels: { [applianceLabel]: ctx.name } },
      policyTypes: ["Ingress"],
    }),
    allow("opensearch", from("cortex")),
    // The operator pulls and lists models (ModelsReady); without it an in-cluster operator never sees them.
    allow("ollama", [...from("cortex", "gateway"), namespacePeer(ctx.operatorNamespace)]),
    // Cortex's API: the gateway's hooks, the operator (policies, dream, promotions) from its own namespace, and
    // the Remram app beside the appliance. Prometheus scrapes /metrics on the same port (Cortex serves both there,
    // so the policy can narrow the scrape to the port, not the path), only from the metrics namespaces.
    policy("allow-cortex", {
      podSelector: { matchLabels: selectorLabels(ctx.name, "cortex") },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            ...from("gateway"),
            namespacePeer(ctx.operatorNamespace),
            { podSelector: { matchLabels: remramAppLabels } },
          ],
          ports: [{ port: ports.cortex }],
        },
        ...(ctx.metricsNamespaces.length === 0
          ? []
          : [{ from: ctx.metricsNamespaces.map(namespacePeer), ports: [{ port: ports.cortex }] }]),
      ],
    }),
    // The gateway is the appliance's front door.
    allow("gateway", []),
    // The hooks plugin's metrics, for Prometheus in the namespaces the chart names, and nobody else.
    ...(ctx.metricsNamespaces.length === 0
      ? []
      : [
          policy("allow-gateway-metrics", {
            podSelector: { matchLabels: selectorLabels(ctx.name, "gateway") },
            policyTypes: ["Ingress"],
            ingress: [
              {
                from: ctx.metricsNamespaces.map(namespacePeer),
                ports: [{ port: hooksMetricsPort }],
              },
            ],
          }),
        ]),
  ];
}

export function buildApplianceChildren(ctx: ApplianceContext): KubeObject[] {
  return [
    ...buildOpenSearch(ctx),
    ...buildOllama(ctx),
    ...buildCortex(ctx),
    ...buildGateway(ctx),
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

// --- GPU node prerequisites -----------------------------------------------------------------------------------

export const devicePluginNamespace = "kube-system";
export const devicePluginName = "remram-nvidia-device-plugin";

/**
 * The NVIDIA device plugin DaemonSet, run under the existing GPU RuntimeClass (the operator reads that one, k3s's
 * `nvidia` by default, and never creates one: see gpu.ts). It serves every GPU workload on the node, not one
 * appliance, and a namespaced appliance cannot own an object in another namespace: so it carries the managed-by
 * label but no ownerReference, and deleting an appliance leaves it. The plugin needs hostPath (kubelet's
 * device-plugin socket dir), which restricted namespaces forbid; it runs in kube-system.
 */
export function buildDevicePlugin(images: OperatorImages, runtimeClassName: string): KubeObject {
  const labels = {
    "app.kubernetes.io/name": "nvidia-device-plugin",
    "app.kubernetes.io/part-of": "remram",
    "app.kubernetes.io/managed-by": managedBy,
  };
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: devicePluginName, namespace: devicePluginNamespace, labels },
    spec: {
      selector: { matchLabels: { "app.kubernetes.io/name": "nvidia-device-plugin" } },
      updateStrategy: { type: "RollingUpdate" },
      template: {
        metadata: { labels },
        spec: {
          runtimeClassName,
          priorityClassName: "system-node-critical",
          tolerations: [{ key: gpuResource, operator: "Exists", effect: "NoSchedule" }],
          containers: [
            {
              name: "nvidia-device-plugin",
              image: images.devicePlugin,
              env: [{ name: "FAIL_ON_INIT_ERROR", value: "false" }],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
              volumeMounts: [{ name: "device-plugin", mountPath: "/var/lib/kubelet/device-plugins" }],
            },
          ],
          volumes: [{ name: "device-plugin", hostPath: { path: "/var/lib/kubelet/device-plugins" } }],
        },
      },
    },
  } as KubeObject;
}
