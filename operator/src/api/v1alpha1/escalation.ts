/**
 * spec.escalation of a RemramAppliance: the optional cloud model a turn may be escalated to, and the policy that
 * decides it (seed 000 §4.2: a control-plane decision in before_model_resolve, logged, never in the prompt). The
 * hooks plugin applies the policy; the operator writes it into the gateway's config and hands the key over as an
 * environment variable, so no key is ever written into openclaw.json.
 */
import { z } from "zod";
import { listMap, secretKeyRef, withCel } from "./common.js";

/**
 * The APIs of OpenClaw's model providers (models.providers.<id>.api) a hosted model is reached through: the two
 * that nearly every hosted model speaks, each proven against a real gateway (operator/test/escalation.int.test.ts).
 */
export const cloudModelApis = ["openai-completions", "anthropic-messages"] as const;
export type CloudModelApi = (typeof cloudModelApis)[number];

/** Provider ids the generated config uses itself (the box's Ollama and its reflection entry). */
export const reservedProviderIds = ["ollama", "ollama-reflect"] as const;

const phrase = z.string().min(1).max(40);

const cloudModel = withCel(
  z
    .object({
      provider: z
        .string()
        .min(1)
        .max(40)
        .regex(/^[a-z][a-z0-9-]*$/)
        .describe(
          "The provider's id in the gateway's config (anthropic, openai, openrouter, ...): model references read <provider>/<model>.",
        ),
      api: z
        .enum(cloudModelApis)
        .default("openai-completions")
        .describe(
          "The wire API: openai-completions for any OpenAI-compatible endpoint (OpenAI, OpenRouter, a LAN vLLM), anthropic-messages for Anthropic's.",
        ),
      baseUrl: z
        .string()
        .min(1)
        .max(2048)
        .regex(/^https?:\/\/[^\s]+$/)
        .describe(
          "The endpoint's base URL, e.g. https://api.anthropic.com or an OpenAI-compatible root ending in /v1.",
        ),
      model: z
        .string()
        .min(1)
        .max(200)
        .regex(/^[a-zA-Z0-9][a-zA-Z0-9._\-/:@]*$/)
        .describe("The model's id at that provider."),
      apiKeySecretRef: secretKeyRef.describe(
        "The Secret key holding the provider's API key. It reaches the gateway as an environment variable only; without it (Secret or key missing) nothing is escalated and EscalationReady says why.",
      ),
      contextWindow: z
        .int()
        .min(2048)
        .max(2000000)
        .default(128000)
        .describe("The cloud model's context window in tokens."),
      maxOutputTokens: z
        .int()
        .min(16)
        .max(131072)
        .default(4096)
        .describe("Most tokens the cloud model may generate in one reply."),
    })
    .strict(),
  {
    rule: "!(self.provider in ['ollama', 'ollama-reflect'])",
    message: "provider ollama and ollama-reflect are the box's own models; name the cloud provider otherwise",
    fieldPath: ".provider",
  },
);

const domainPolicy = z
  .object({
    name: z
      .string()
      .min(1)
      .max(63)
      .regex(/^[a-z][a-z0-9-]*$/),
    keywords: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(50)
      .describe("Whole words or phrases (any case) that put a prompt in this domain."),
    policy: z
      .enum(["local-only", "prefer-cloud"])
      .describe(
        "local-only: such turns never leave the box, whatever the person asks; prefer-cloud: escalate them.",
      ),
  })
  .strict();

export const escalationSpec = z
  .object({
    enabled: z
      .boolean()
      .default(true)
      .describe("false keeps every turn on the box's own models, cloud model or not."),
    cloud: cloudModel
      .optional()
      .describe("The model turns are escalated to. Unset: no turn ever leaves the box."),
    contextPressureRatio: z
      .number()
      .min(0.1)
      .max(1)
      .default(0.8)
      .describe(
        "Escalate when transcript, prompt, knowledge and reserved reply would fill more than this share of the local model's context window (spec.ollama.contextWindow).",
      ),
    complexityThreshold: z
      .int()
      .min(1)
      .max(100)
      .default(4)
      .describe(
        "Escalate at this complexity score or more (long prompts, code, several questions, reasoning words, attachments).",
      ),
    directives: z
      .object({
        local: z.array(phrase).max(20).optional().describe("Words a person writes to keep a turn local."),
        cloud: z.array(phrase).max(20).optional().describe("Words a person writes to escalate a turn."),
      })
      .strict()
      .optional()
      .describe("Explicit directives; by default /local and #local, /cloud, #cloud and /escalate."),
    domains: listMap(z.array(domainPolicy).max(20), "name")
      .optional()
      .describe(
        "Topics with a policy of their own; local-only wins over every directive, prefer-cloud over pressure and complexity.",
      ),
    allowPrivateToCloud: z
      .boolean()
      .default(false)
      .describe(
        "Consent for private knowledge to reach the cloud model. Off: a turn whose knowledge holds private items stays local, and a cloud turn is given no private item.",
      ),
  })
  .strict();

export type EscalationSpec = z.output<typeof escalationSpec>;
export type CloudModelSpec = NonNullable<EscalationSpec["cloud"]>;
