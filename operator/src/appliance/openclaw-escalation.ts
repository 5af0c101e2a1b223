/**
 * The escalation part of the gateway's openclaw.json: the cloud model's provider entry and the hooks plugin's
 * escalation policy, from spec.escalation. The key never enters the config: the provider's apiKey is an OpenClaw
 * SecretRef to an environment variable the gateway container gets from the user's Secret (children/gateway.ts).
 */
import type { EscalationSpec } from "../api/v1alpha1/escalation.js";

/** The gateway container's variable holding the cloud provider's API key (from spec.escalation.cloud.apiKeySecretRef). */
export const cloudApiKeyEnv = "REMRAM_CLOUD_API_KEY";

/** A cloud turn may take this long before OpenClaw gives up on the provider (hosted models answer in seconds). */
const cloudTimeoutSeconds = 180;

/** The cloud model in effect: configured, enabled and with its key found; otherwise nothing escalates. */
export function activeCloudModel(
  escalation: EscalationSpec,
  cloudKeyAvailable: boolean,
): NonNullable<EscalationSpec["cloud"]> | undefined {
  return escalation.enabled && cloudKeyAvailable ? escalation.cloud : undefined;
}

/** models.providers.<cloud provider>: the hosted model, reached with the key from the environment. */
export function cloudProviderEntry(cloud: NonNullable<EscalationSpec["cloud"]>) {
  return {
    baseUrl: cloud.baseUrl,
    api: cloud.api,
    apiKey: { source: "env", provider: "default", id: cloudApiKeyEnv },
    timeoutSeconds: cloudTimeoutSeconds,
    models: [
      {
        id: cloud.model,
        name: cloud.model,
        input: ["text"],
        contextWindow: cloud.contextWindow,
        maxTokens: cloud.maxOutputTokens,
      },
    ],
  };
}

export interface EscalationPolicyInput {
  escalation: EscalationSpec;
  cloudKeyAvailable: boolean;
  /** The routing model on the box's Ollama, and the window it runs with (spec.ollama.contextWindow). */
  local: { provider: string; model: string; contextWindow: number };
  /** Providers whose models run on the box (the Ollama entries): anything else counts as cloud. */
  localProviders: readonly string[];
}

/** The hooks plugin's `escalation` config (hooks/src/config.ts), in the plugin's own terms. */
export function escalationPolicy(input: EscalationPolicyInput): Record<string, unknown> {
  const { escalation } = input;
  const cloud = activeCloudModel(escalation, input.cloudKeyAvailable);
  return {
    enabled: escalation.enabled,
    local: input.local,
    ...(cloud === undefined ? {} : { cloud: { provider: cloud.provider, model: cloud.model } }),
    localProviders: [...input.localProviders],
    contextPressureRatio: escalation.contextPressureRatio,
    complexityThreshold: escalation.complexityThreshold,
    ...(escalation.directives === undefined ? {} : { directives: escalation.directives }),
    ...(escalation.domains === undefined ? {} : { domains: escalation.domains }),
    allowPrivateToCloud: escalation.allowPrivateToCloud,
  };
}
