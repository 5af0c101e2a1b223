/**
 * The gateway's openclaw.json, generated from the appliance spec for OpenClaw 2026.9.6 (see the research note on
 * OpenClaw hooks): built-in memory off (the hooks plugin holds the memory slot), Ollama as the only provider (native API, no /v1), the Remram hooks plugin
 * loaded from a folder an init container fills, and a non-loopback bind guarded by token auth.
 */
import { memoryToolNames } from "@remram/contract";
import type { CloudModelApi } from "../api/v1alpha1/escalation.js";
import type { SupportedChannel } from "../api/v1alpha1/gateway-channels.js";
import { identityKey, type RemramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { activeChannels, channelBindings, channelsConfig } from "./openclaw-channels.js";
import { activeCloudModel, cloudProviderEntry, escalationPolicy } from "./openclaw-escalation.js";
import { reflectionDeltaJsonSchema } from "./reflection-delta-schema.js";

export const gatewayPort = 18789;
export const hooksPluginId = "remram-hooks";
/** The provider entry reflection runs use: the same Ollama, replies held to the delta's schema (Ollama's format). */
export const reflectionProviderId = "ollama-reflect";
/** The gateway pod's emptyDir the hooks image's init container fills. */
export const hooksVolumeDir = "/opt/remram-hooks";
/** The plugin one level down: OpenClaw refuses a world-writable plugin folder, and an emptyDir's root is mode 0777. */
export const hooksPluginDir = `${hooksVolumeDir}/plugin`;
/**
 * The gateway image's npm cache holding OpenClaw's Discord plugin (hack/gateway/Dockerfile): with the channel on, the
 * gateway installs the plugin at its first start from a writable copy of it, offline. Telegram is bundled.
 */
export const gatewayNpmCacheSeed = "/opt/openclaw-npm-cache";
/** The hooks plugin serves its Prometheus metrics here, on the pod's address (the gateway container's "metrics" port). */
export const hooksMetricsPort = 9464;
/** The first agent's workspace, and the parent of the others': the only folders file tools reach (workspaceOnly). */
export const gatewayWorkspaceDir = "/data/workspace";
/**
 * Promoted artifacts, in each agent's workspace: a read-only mount of the artifacts folder of Cortex's own
 * repository, so an agent reads what was approved and can change none of it.
 */
export const gatewayArtifactsFolder = "artifacts";
/**
 * Where the gateway pod mounts the Cortex token; the plugin reads it from there (never inline in the config).
 * Outside the workspace, so the agent's file tools cannot open it, and no shell tool exists to read it otherwise.
 */
export const gatewayCortexTokenFile = "/var/run/secrets/remram/cortex/token";

/** The gateway's agents: the spec's, or the single `main` agent. */
export function gatewayAgents(gateway: RemramApplianceSpec["gateway"]): { id: string; model?: string }[] {
  return gateway.agents ?? [{ id: "main" }];
}

/**
 * Each agent's workspace, in spec order: the first agent's is the workspace root, any other's a folder of it named
 * after the agent (OpenClaw's own choice, written out so that the pod's mounts and the config agree). Every one gets
 * the promoted artifacts at `artifacts/`.
 */
export function agentWorkspaces(
  gateway: RemramApplianceSpec["gateway"],
): { id: string; model?: string; workspace: string }[] {
  return gatewayAgents(gateway).map((agent, index) => ({
    ...agent,
    workspace: index === 0 ? gatewayWorkspaceDir : `${gatewayWorkspaceDir}/${agent.id}`,
  }));
}

/** Below this window the workspace's bootstrap files (AGENTS.md, SOUL.md, ...) would crowd out the conversation. */
export const bootstrapContextMinimum = 16384;
/**
 * The least a reflection run may generate, whatever the chat reply cap: a delta cut off by the token limit is not
 * JSON and is dropped (a 256-token cap on the test bed cut about one SmolLM2 delta in three). Half the smallest
 * window the spec admits (2048), so the turn being reflected on still fits.
 */
export const reflectionOutputTokensMinimum = 1024;
/**
 * What the agent's tools may do in the gateway pod. The hooks plugin runs in the gateway's process and reads the
 * Cortex token from a file; a tool running as the same user could read it as well, so:
 * - file tools (read, write, edit, apply_patch) and local media paths stay inside the workspace;
 * - no shell: exec, process and code_execution (group:runtime) would run as the gateway's user and read any file
 *   it can, the token included;
 * - no control plane: gateway (reads the config), openclaw (applies config changes, which could lift this policy),
 *   plugins and cron (group:automation);
 * - no elevated mode (exec outside a sandbox).
 */
export const agentToolPolicy = {
  fs: { workspaceOnly: true },
  deny: ["group:runtime", "group:automation"],
  elevated: { enabled: false },
} as const;

export interface OpenClawConfigInput {
  gateway: RemramApplianceSpec["gateway"];
  models: { routing: string; reflection: string; embedding: string };
  /** The context window and reply cap the chat models run with (spec.ollama). */
  generation: { contextWindow: number; maxOutputTokens: number };
  /**
   * Ollama's Service by its bare name (same namespace): OpenClaw then treats it as a local server, with the long
   * first-token patience a CPU box needs; a dotted name counts as a cloud endpoint with a 2-minute watchdog.
   */
  ollamaUrl: string;
  cortexUrl: string;
  /** Ceiling of the injected knowledge bundle; the plugin sends it to Cortex as the retrieval budget. */
  tokenBudget: number;
  /** How long a run waits for its knowledge (the plugin's retrieve cap). */
  retrieveTimeoutMs: number;
  gatewayToken: string;
  /** Where the gateway takes X-Forwarded-For from (gatewayTrustedProxies); empty: from nobody. */
  trustedProxies?: readonly string[];
  household?: RemramApplianceSpec["household"];
  /** Where ArtifactProposals are approved: the plugin names the object in its reply to an explicit save. */
  approval?: { appliance: string; namespace: string };
  /** spec.escalation, and whether its cloud key was found (without it nothing escalates). */
  escalation: RemramApplianceSpec["escalation"];
  cloudKeyAvailable: boolean;
  /** The spec.gateway.channels whose bot token was found (a channel without one stays out). */
  channelTokensFound?: readonly SupportedChannel[];
}

/** Bundled OpenClaw plugins a cloud model's API needs beside the core (Anthropic's adapter is a plugin). */
const pluginsForApi: Record<CloudModelApi, readonly string[]> = {
  "openai-completions": [],
  "anthropic-messages": ["anthropic"],
};

/**
 * The household in OpenClaw's and the plugin's terms. session.identityLinks makes OpenClaw put the member's id in
 * place of the channel peer in every direct-session key (one session per member with dmScope per-peer, one per
 * member and channel with per-channel-peer), and the plugin's principals map those keys to the member as the
 * Cortex user, in the household.
 */
export function householdSettings(household: RemramApplianceSpec["household"]) {
  if (household === undefined) return undefined;
  const members = household.members;
  return {
    identityLinks: Object.fromEntries(
      members
        .filter((member) => member.identities.length > 0)
        .map((member) => [member.id, member.identities.map(identityKey)]),
    ),
    principals: {
      householdId: household.id,
      members: members.map((member) => member.id),
      identities: Object.fromEntries(
        members.flatMap((member) => member.identities.map((identity) => [identityKey(identity), member.id])),
      ),
    },
  };
}

export function buildOpenClawConfig(input: OpenClawConfigInput): Record<string, unknown> {
  const agents = agentWorkspaces(input.gateway);
  const { contextWindow, maxOutputTokens } = input.generation;
  const smallContext = contextWindow < bootstrapContextMinimum;
  const reflectionOutputTokens = Math.max(maxOutputTokens, reflectionOutputTokensMinimum);
  const chatModel = (model: string, outputTokens: number, params: Record<string, unknown> = {}) => ({
    id: model,
    name: model,
    input: ["text"],
    contextWindow,
    maxTokens: outputTokens,
    // Without a window OpenClaw assumes 128k and sends prompts Ollama's num_ctx cannot hold.
    params: { num_ctx: contextWindow, num_predict: outputTokens, ...params },
  });
  const ollamaProvider = (models: ReturnType<typeof chatModel>[]) => ({
    baseUrl: input.ollamaUrl,
    // Ollama ignores the key. OpenClaw 2026.9.6 does not accept its own "ollama-local" marker for a model the
    // hooks plugin routes a run to (the run fails with missing-provider-auth), so this is a plain value.
    apiKey: "remram-appliance",
    api: "ollama",
    // A cold model on a CPU box can take minutes to answer a long prompt.
    timeoutSeconds: 600,
    models,
  });
  const household = householdSettings(input.household);
  const cloud = activeCloudModel(input.escalation, input.cloudKeyAvailable);
  const channels = activeChannels(input.gateway.channels, input.channelTokensFound ?? []);
  const channelSection = channelsConfig(input.gateway.channels, input.household, channels);
  const bindings = channelBindings(
    agents.map((agent) => agent.id),
    channels,
  );
  return {
    gateway: {
      mode: "local",
      port: gatewayPort,
      // In a pod the Service reaches the gateway on the pod IP; loopback would only work through port-forward.
      bind: "lan",
      auth: { mode: "token", token: input.gatewayToken },
      http: { endpoints: { chatCompletions: { enabled: true } } },
      // Behind the Ingress every request carries X-Forwarded-For, which OpenClaw refuses unless a trusted proxy
      // (the ingress controller's pods) sent it.
      ...(input.trustedProxies?.length ? { trustedProxies: [...input.trustedProxies] } : {}),
    },
    models: {
      mode: "replace",
      catalogRefresh: { enabled: false },
      providers: {
        ollama: ollamaProvider(
          [
            ...new Set([
              input.models.routing,
              ...agents.flatMap((agent) => (agent.model ? [agent.model] : [])),
            ]),
          ].map((model) => chatModel(model, maxOutputTokens)),
        ),
        // The reflection model under a provider of its own, so the delta's schema binds reflection runs only and
        // never the conversation, even when both roles name the same model.
        [reflectionProviderId]: ollamaProvider([
          chatModel(input.models.reflection, reflectionOutputTokens, { format: reflectionDeltaJsonSchema }),
        ]),
        ...(cloud === undefined ? {} : { [cloud.provider]: cloudProviderEntry(cloud) }),
      },
    },
    agents: {
      // Several agents: OpenClaw 2026.9.6 requires explicit ownership; the first agent owns the gateway's own work
      // and channels no binding routes. HTTP clients must then name an agent (`openclaw` alone answers 400).
      ...(agents.length > 1 ? { ownership: "explicit" } : {}),
      defaults: {
        ...(agents.length > 1 ? { systemAgent: { agentId: agents[0]?.id } } : {}),
        model: { primary: `ollama/${input.models.routing}` },
        workspace: gatewayWorkspaceDir,
        sandbox: { mode: input.gateway.sandbox },
        heartbeat: { every: "0m" },
        // A long conversation outgrows a local model's window and is compacted before each turn. OpenClaw's quality
        // audit refuses a summary that lacks its headings or exact identifiers, which small local models often
        // write, and then fails every later turn of that session ("Preflight compaction required but failed", a
        // 500, found on the real node). A household's conversation must keep answering: the summary only shapes
        // what the model sees next, the full history stays on disk and the durable memory is Cortex's.
        compaction: { mode: "safeguard", qualityGuard: { enabled: false } },
        ...(smallContext ? { skipBootstrap: true, contextInjection: "never" } : {}),
      },
      // 2026.9.6 retired per-entry `default` markers.
      entries: Object.fromEntries(
        agents.map(({ id, model, workspace }) => [
          id,
          {
            ...(model ? { model: `ollama/${model}` } : {}),
            ...(workspace !== gatewayWorkspaceDir ? { workspace } : {}),
          },
        ]),
      ),
    },
    session: {
      dmScope: input.gateway.dmScope,
      ...(household === undefined ? {} : { identityLinks: household.identityLinks }),
    },
    messages: { queue: { mode: input.gateway.queueMode } },
    ...(channelSection === undefined ? {} : { channels: channelSection }),
    ...(bindings === undefined ? {} : { bindings }),
    tools: {
      ...agentToolPolicy,
      // Narrowed tools keep the memory tools: Remram is the agents' memory, and Cortex scopes what they return.
      ...(input.gateway.tools?.allow
        ? { allow: [...new Set([...input.gateway.tools.allow, ...memoryToolNames])] }
        : {}),
      // The only subagents are the plugin's reflection runs: they answer with a JSON delta and need no tool. A
      // reflection that could call tools would be steerable by the conversation it reads; and Ollama constrains
      // the reply to the delta's schema only when no tools are offered.
      subagents: { tools: { deny: ["*"] } },
    },
    memory: { search: { enabled: false } },
    update: { checkOnStart: false, auto: { enabled: false } },
    discovery: { mdns: { mode: "off" } },
    telemetry: { enabled: false },
    browser: { enabled: false },
    plugins: {
      // Only what the appliance uses: the native Ollama adapter and the hooks plugin. Otherwise every bundled
      // plugin loads (browser, computer use, device pairing ...), each a capability the agent does not need.
      // Each active channel's plugin (bundled telegram; discord is OpenClaw's official plugin @openclaw/discord).
      allow: ["ollama", ...(cloud === undefined ? [] : pluginsForApi[cloud.api]), ...channels, hooksPluginId],
      load: { paths: [hooksPluginDir] },
      // The hooks plugin holds the memory slot (its manifest's kind "memory"): it provides memory_search and
      // memory_get backed by Cortex, and OpenClaw's own memory (memory-core) is off because the slot names another.
      slots: { memory: hooksPluginId },
      entries: {
        // Off outright: with another plugin in the slot, OpenClaw would still load memory-core as a dreaming
        // sidecar (dreaming on by default); Remram's dream is the only one.
        "memory-core": { enabled: false },
        [hooksPluginId]: {
          enabled: true,
          hooks: { allowConversationAccess: true, allowPromptInjection: true },
          // Reflection runs on the spec's reflection model; the gateway lets the plugin pick that one model only.
          subagent: {
            allowModelOverride: true,
            allowedModels: [`${reflectionProviderId}/${input.models.reflection}`],
          },
          // Must validate against the plugin's configSchema (hooks/openclaw.plugin.json) or the gateway refuses to start.
          config: {
            cortex: {
              url: input.cortexUrl,
              tokenFile: gatewayCortexTokenFile,
              retrieveTimeoutMs: input.retrieveTimeoutMs,
            },
            injection: { tokenCeiling: input.tokenBudget },
            ...(household === undefined ? {} : { principals: household.principals }),
            reflection: { model: { provider: reflectionProviderId, model: input.models.reflection } },
            // Every finished session's transcript into Cortex's archive (seed 004): the appliance opts in.
            archive: { enabled: true },
            escalation: escalationPolicy({
              escalation: input.escalation,
              cloudKeyAvailable: input.cloudKeyAvailable,
              local: { provider: "ollama", model: input.models.routing, contextWindow },
              localProviders: ["ollama", reflectionProviderId],
            }),
            ...(input.approval === undefined ? {} : { explicitSave: { approval: input.approval } }),
            metrics: { host: "0.0.0.0", port: hooksMetricsPort },
          },
        },
      },
    },
  };
}
