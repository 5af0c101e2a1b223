import type { PluginConfig } from "./config.js";
import { estimateTokens } from "./injection.js";

/**
 * The escalation decision of before_model_resolve (seed 000 §4.2): keep the turn on the local model or send
 * it to the configured cloud model. Pure: everything it weighs is passed in.
 *
 * Precedence, first match wins:
 *  1. no cloud model configured, or escalation disabled → local;
 *  2. the retrieved knowledge holds private-scope items without cloud consent → local (privacy is hard);
 *  3. a local-only domain matches → local (household policy beats a user's wish);
 *  4. an explicit user directive → local or cloud;
 *  5. a prefer-cloud domain matches → cloud;
 *  6. context pressure: transcript + prompt + knowledge + reserved output over the local window share → cloud;
 *  7. complexity score at or over the threshold → cloud;
 *  8. otherwise local.
 * Any failure while deciding is turned into local by the caller (reason "error").
 */

export type EscalationReason =
  | "no_cloud_model"
  | "disabled"
  | "privacy_private_knowledge"
  | "domain_local_only"
  | "user_directive_local"
  | "user_directive_cloud"
  | "domain_prefer_cloud"
  | "context_pressure"
  | "complexity"
  | "default_local"
  | "error";

export interface EscalationDecision {
  target: "local" | "cloud";
  reason: EscalationReason;
  /** Domain name, token numbers or complexity signals behind the reason, for the structured log. */
  detail: Record<string, string | number | boolean>;
}

export interface EscalationInput {
  prompt: string;
  attachmentKinds: readonly string[];
  /** Tokens of the session transcript as last seen (0 for a new session). */
  transcriptTokens: number;
  /** Tokens the knowledge block will add, and whether it carries private items without consent. */
  knowledgeTokens: number;
  knowledgeBlocksCloud: boolean;
}

const complexityMarkers: readonly RegExp[] = [
  /\bstep[- ]by[- ]step\b/i,
  /\b(prove|derive|proof)\b/i,
  /\b(architect|design|refactor|optimi[sz]e)\b/i,
  /\b(analy[sz]e|compare|trade-?offs?|evaluate)\b/i,
  /\b(plan|strategy|roadmap)\b/i,
  /\b(debug|stack ?trace|exception)\b/i,
];

/** Heuristic complexity: length, code, several questions, reasoning vocabulary, non-text attachments. */
export function complexitySignals(
  prompt: string,
  attachmentKinds: readonly string[],
): Record<string, number> {
  const words = prompt.split(/\s+/).filter(Boolean).length;
  const codeFences = (prompt.match(/```/g) ?? []).length / 2;
  const questions = (prompt.match(/\?/g) ?? []).length;
  return {
    length: words >= 400 ? 2 : words >= 120 ? 1 : 0,
    code: codeFences >= 1 ? 2 : 0,
    questions: questions >= 3 ? 1 : 0,
    reasoning: complexityMarkers.filter((marker) => marker.test(prompt)).length,
    attachments: attachmentKinds.some((kind) => kind !== "other") ? 2 : 0,
  };
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

/** Whole-word (or whole-phrase) match, case-insensitive; directives like "/cloud" match as tokens. */
function mentions(prompt: string, phrase: string): boolean {
  return new RegExp(`(^|[^\\p{L}\\p{N}_])${escapeRegExp(phrase)}($|[^\\p{L}\\p{N}_])`, "iu").test(prompt);
}

export function decideEscalation(
  input: EscalationInput,
  config: PluginConfig["escalation"],
): EscalationDecision {
  if (!config.enabled) return { target: "local", reason: "disabled", detail: {} };
  if (config.cloud === undefined) return { target: "local", reason: "no_cloud_model", detail: {} };

  const matchingDomains = config.domains.filter((domain) =>
    domain.keywords.some((keyword) => mentions(input.prompt, keyword)),
  );
  const localOnly = matchingDomains.find((domain) => domain.policy === "local-only");
  const wantsLocal = config.directives.local.find((directive) => mentions(input.prompt, directive));
  const wantsCloud = config.directives.cloud.find((directive) => mentions(input.prompt, directive));
  const preferCloud = matchingDomains.find((domain) => domain.policy === "prefer-cloud");
  const window = config.local?.contextWindow;
  const estimated =
    input.transcriptTokens +
    estimateTokens(input.prompt) +
    input.knowledgeTokens +
    config.reservedOutputTokens;
  const signals = complexitySignals(input.prompt, input.attachmentKinds);
  const score = Object.values(signals).reduce((sum, value) => sum + value, 0);

  // Every cloud outcome below passes through here first.
  const cloud = (reason: EscalationReason, detail: EscalationDecision["detail"]): EscalationDecision =>
    input.knowledgeBlocksCloud
      ? { target: "local", reason: "privacy_private_knowledge", detail: { wouldHaveBeen: reason } }
      : { target: "cloud", reason, detail };

  if (localOnly) return { target: "local", reason: "domain_local_only", detail: { domain: localOnly.name } };
  if (wantsLocal)
    return { target: "local", reason: "user_directive_local", detail: { directive: wantsLocal } };
  if (wantsCloud) return cloud("user_directive_cloud", { directive: wantsCloud });
  if (preferCloud) return cloud("domain_prefer_cloud", { domain: preferCloud.name });
  if (window !== undefined && estimated > window * config.contextPressureRatio) {
    return cloud("context_pressure", { estimatedTokens: estimated, localWindow: window });
  }
  if (score >= config.complexityThreshold) return cloud("complexity", { score, ...signals });
  return {
    target: "local",
    reason: "default_local",
    detail: { estimatedTokens: estimated, complexity: score },
  };
}

/**
 * The hook result for a decision: the chosen model, or nothing. Without live escalation (disabled, or no cloud model)
 * no run was headed for the cloud, so a local decision keeps the model the run's agent names: overriding it with
 * the local model would ignore every agent's own model.
 */
export function modelOverrideFor(
  decision: EscalationDecision,
  config: PluginConfig["escalation"],
): { providerOverride: string; modelOverride: string } | undefined {
  if (decision.target === "local" && (!config.enabled || config.cloud === undefined)) return undefined;
  const model = decision.target === "cloud" ? config.cloud : config.local;
  return model === undefined ? undefined : { providerOverride: model.provider, modelOverride: model.model };
}

export type ModelLocation = "local" | "cloud";

/** Where a provider's models run: on the box only when listed in `localProviders`; unknown counts as cloud. */
export function modelLocationOf(
  provider: string | undefined,
  localProviders: readonly string[],
): ModelLocation {
  return provider !== undefined && localProviders.includes(provider) ? "local" : "cloud";
}

/**
 * The model a reflection run uses: the configured reflection model (its provider entry may hold the reply to
 * JSON), else the local one. Reflection reads a user's turn, so it is never a cloud decision.
 */
export function reflectionModelOverride(
  config: Pick<PluginConfig, "escalation" | "reflection">,
): { providerOverride: string; modelOverride: string } | undefined {
  const model = config.reflection.model ?? config.escalation.local;
  return model === undefined ? undefined : { providerOverride: model.provider, modelOverride: model.model };
}
