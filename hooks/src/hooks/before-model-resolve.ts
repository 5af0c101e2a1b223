import type { PluginConfig } from "../config.js";
import {
  decideEscalation,
  type EscalationDecision,
  type EscalationInput,
  modelLocationOf,
  modelOverrideFor,
  reflectionModelOverride,
} from "../escalation.js";
import { blocksCloud } from "../injection.js";
import { errorMessage, logEvent } from "../log.js";
import { increment } from "../metrics.js";
import type { HookHandlers, HostLogger } from "../openclaw-api.js";
import { isReflectionSession, type PrincipalLookup } from "../principal.js";
import { type PrefetchEntry, type SharedState, sweepPrefetch } from "../shared-state.js";
import { type Retrieve, runKey } from "./retrieve.js";

export interface EscalationHookDeps {
  config: Pick<PluginConfig, "escalation" | "injection" | "reflection">;
  state: Pick<SharedState, "counters" | "prefetch" | "transcriptTokens">;
  principalOf: PrincipalLookup;
  retrieve: Retrieve;
  logger: HostLogger;
}

/**
 * before_model_resolve: starts the run's /retrieve (awaited later by before_prompt_build) and picks the local
 * or the cloud model. Any failure decides local, reason `error`.
 */
export function escalationHook(deps: EscalationHookDeps): HookHandlers["before_model_resolve"] {
  const { config, state, principalOf, retrieve, logger } = deps;
  const counters = state.counters;
  return async (event, ctx) => {
    let decision: EscalationDecision;
    try {
      if (isReflectionSession(ctx.sessionKey)) return reflectionModelOverride(config);
      const now = Date.now();
      sweepPrefetch(state, now);
      const key = runKey(ctx);
      const principal = principalOf(ctx);
      const escalationPossible = config.escalation.enabled && config.escalation.cloud !== undefined;
      const input: EscalationInput = {
        prompt: event.prompt,
        attachmentKinds: (event.attachments ?? []).map((attachment) => attachment.kind),
        transcriptTokens:
          ctx.sessionKey === undefined ? 0 : (state.transcriptTokens.get(ctx.sessionKey) ?? 0),
        knowledgeTokens: 0,
        knowledgeBlocksCloud: false,
      };
      // The bundle is asked for before the decision it feeds, so for the model the run is headed to without
      // knowledge: the knowledge can only veto the cloud, or (by its size) push a run there, which
      // before_prompt_build then sees and retrieves again for. While the veto can fire it is asked for the local
      // model, whatever the run is headed to: Cortex leaves private items out of a cloud bundle, and the veto must
      // see them.
      const headedTo = escalationPossible
        ? modelOverrideFor(decideEscalation(input, config.escalation), config.escalation)?.providerOverride
        : undefined;
      const vetoPossible = escalationPossible && !config.escalation.allowPrivateToCloud;
      const modelLocation = vetoPossible
        ? "local"
        : modelLocationOf(headedTo ?? ctx.modelProviderId, config.escalation.localProviders);
      const entry: PrefetchEntry | undefined =
        key !== undefined && principal.ok && config.injection.enabled
          ? {
              startedAt: now,
              modelLocation,
              outcome: retrieve(principal.principal, event.prompt, modelLocation),
            }
          : undefined;
      if (key !== undefined && entry !== undefined) state.prefetch.set(key, entry);
      // Waiting for the bundle only matters when it could veto a cloud model; it is bounded by its timeout.
      const outcome = escalationPossible && entry !== undefined ? await entry.outcome : undefined;
      const bundle = outcome?.status === "ok" ? outcome.bundle : undefined;
      decision = decideEscalation(
        {
          ...input,
          // Cortex's count of the block it rendered (the exact text before_prompt_build injects).
          knowledgeTokens: bundle?.bundle.tokens ?? 0,
          knowledgeBlocksCloud:
            bundle !== undefined && blocksCloud(bundle, config.escalation.allowPrivateToCloud),
        },
        config.escalation,
      );
      if (entry !== undefined) entry.decision = decision;
    } catch (error) {
      increment(counters.hookErrors, "before_model_resolve");
      decision = { target: "local", reason: "error", detail: { message: errorMessage(error) } };
    }
    increment(counters.escalations, `${decision.target}:${decision.reason}`);
    logEvent(logger, "info", "escalation_decision", {
      sessionKey: ctx.sessionKey,
      runId: ctx.runId,
      target: decision.target,
      reason: decision.reason,
      ...decision.detail,
    });
    return modelOverrideFor(decision, config.escalation);
  };
}
