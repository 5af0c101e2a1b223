/**
 * The OpenClaw gateway: its Deployment with the hooks plugin, the Secret holding its openclaw.json and token, and
 * its Service.
 */
import { createHash } from "node:crypto";
import { basename, dirname } from "node:path";
import type { KubeObject } from "../../runtime/kube-client.js";
import { activeChannels, channelTokenEnv, channelTokenRefs } from "../openclaw-channels.js";
import {
  agentWorkspaces,
  buildOpenClawConfig,
  gatewayArtifactsFolder,
  gatewayCortexTokenFile,
  gatewayNpmCacheSeed,
  gatewayWorkspaceDir,
  hooksMetricsPort,
  hooksPluginDir,
  hooksVolumeDir,
} from "../openclaw-config.js";
import { activeCloudModel, cloudApiKeyEnv } from "../openclaw-escalation.js";
import { cortexArtifactsSubPath, cortexCredentialSecret } from "./cortex.js";
import { buildGatewayExposure, gatewayService, gatewayTrustedProxies } from "./gateway-expose.js";
import { requiredModels } from "./ollama.js";
import {
  type ApplianceContext,
  childLabels,
  childMeta,
  childName,
  childSecret,
  ports,
  resourcesOf,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  selectorLabels,
  serviceUrl,
} from "./shared.js";

export const configHashAnnotation = "remram.io/config-hash";
/** The cloud key Secret's resourceVersion (never its value): a rotated key rolls the pod onto it. */
export const cloudKeyVersionAnnotation = "remram.io/cloud-key-version";
/** The channel token Secrets' resourceVersions (never the tokens), e.g. "telegram=41,discord=57". */
export const channelTokenVersionsAnnotation = "remram.io/channel-token-versions";
/** The gateway's writable cache volume (OpenClaw's ~/.cache), and npm's cache in it. */
export const gatewayCacheDir = "/home/node/.cache";
export const gatewayNpmCache = `${gatewayCacheDir}/npm`;

function hashOf(value: unknown): string {
  return createHash("sha256").update(JSON.stringify(value)).digest("hex").slice(0, 16);
}

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
  const versions = ctx.channelTokenVersions ?? {};
  const foundChannels = channelTokenRefs(ctx.spec.gateway.channels)
    .map(({ channel }) => channel)
    .filter((channel) => versions[channel] !== undefined);
  const channels = activeChannels(ctx.spec.gateway.channels, foundChannels);
  const discord = channels.includes("discord");
  const tokenRefs = channelTokenRefs(ctx.spec.gateway.channels).filter(({ channel }) =>
    channels.includes(channel),
  );
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
    trustedProxies: gatewayTrustedProxies(ctx),
    household: ctx.spec.household,
    approval: { appliance: ctx.name, namespace: ctx.namespace },
    escalation: ctx.spec.escalation,
    cloudKeyAvailable: ctx.cloudKeyVersion !== undefined,
    channelTokensFound: foundChannels,
  });
  const cloud = activeCloudModel(ctx.spec.escalation, ctx.cloudKeyVersion !== undefined);
  const cortexToken = cortexCredentialSecret(ctx, "gateway");
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
    metadata: childMeta(ctx, "gateway"),
    spec: {
      replicas: 1,
      strategy: { type: "Recreate" },
      selector: { matchLabels: selectorLabels(ctx.name, "gateway") },
      template: {
        metadata: {
          labels: childLabels(ctx.name, "gateway"),
          // A changed openclaw.json rolls the pod so the init container seeds the new file.
          annotations: {
            [configHashAnnotation]: hashOf(configJson),
            ...(cloud === undefined || ctx.cloudKeyVersion === undefined
              ? {}
              : { [cloudKeyVersionAnnotation]: ctx.cloudKeyVersion }),
            ...(channels.length === 0
              ? {}
              : {
                  [channelTokenVersionsAnnotation]: channels
                    .map((channel) => `${channel}=${versions[channel]}`)
                    .join(","),
                }),
          },
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
                `mkdir -p ${stateDir} && cp /etc/remram/gateway/openclaw.json ${stateDir}/openclaw.json${
                  discord
                    ? ` && mkdir -p ${gatewayNpmCache} && cp -R ${gatewayNpmCacheSeed}/. ${gatewayNpmCache}/`
                    : ""
                }`,
              ],
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "config", mountPath: "/etc/remram/gateway", readOnly: true },
                { name: "state", mountPath: stateDir, subPath: "openclaw" },
                // npm writes into its cache (index, logs): a copy in the pod's cache volume, not the image's.
                ...(discord ? [{ name: "cache", mountPath: gatewayCacheDir }] : []),
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
                // Channels start only when some are configured (the deprecated mounts kept them on, as before).
                ...(channelMounts.length === 0 && channels.length === 0
                  ? [{ name: "OPENCLAW_SKIP_CHANNELS", value: "1" }]
                  : []),
                // Discord's plugin, installed by the gateway at its first start with the channel on, from the image's
                // npm cache (gatewayNpmCacheSeed) and never from the network.
                ...(discord
                  ? [
                      { name: "npm_config_cache", value: gatewayNpmCache },
                      { name: "npm_config_offline", value: "true" },
                      { name: "npm_config_update_notifier", value: "false" },
                    ]
                  : []),
                // Each bot token as the variable its SecretRef in openclaw.json names.
                ...tokenRefs.map(({ channel, ref }) => ({
                  name: channelTokenEnv[channel],
                  valueFrom: { secretKeyRef: ref },
                })),
                // The cloud key as the variable openclaw.json's SecretRef names: never in the config itself.
                ...(cloud === undefined
                  ? []
                  : [{ name: cloudApiKeyEnv, valueFrom: { secretKeyRef: cloud.apiKeySecretRef } }]),
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
                { name: "cache", mountPath: gatewayCacheDir },
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
    childSecret(ctx, "gateway-config", { "openclaw.json": configJson, token: ctx.secrets.gatewayToken }),
    deployment as unknown as KubeObject,
    gatewayService(ctx),
    ...buildGatewayExposure(ctx),
  ];
}
