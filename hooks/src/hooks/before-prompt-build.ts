import type { PluginConfig } from "../config.js";
import { modelLocationOf } from "../escalation.js";
import { rememberInjection } from "../injected-content.js";
import { itemsWithheldFrom, knowledgeBlock } from "../injection.js";
import { errorMessage, logEvent } from "../log.js";
import { increment } from "../metrics.js";
import type { HookHandlers, HostLogger } from "../openclaw-api.js";
import { isReflectionSession, type PrincipalLookup } from "../principal.js";
import { rememberReflectionTargets, shownTargets } from "../reflection-targets.js";
import { rememberTranscriptTokens, type SharedState } from "../shared-state.js";
import { type Retrieve, runKey } from "./retrieve.js";

export interface InjectionHookDeps {
  config: Pick<PluginConfig, "escalation" | "injection">;
  state: Pick<SharedState, "counters" | "prefetch" | "transcriptTokens" | "injected" | "reflectionTargets">;
  principalOf: PrincipalLookup;
  retrieve: Retrieve;
  logger: HostLogger;
}

/** Rough transcript size: the text of every message (exact counting is Cortex's job, not the hot path's). */
function transcriptTokens(messages: readonly unknown[]): number {
  let characters = 0;
  for (const message of messages) {
    const content =
      typeof message === "object" && message !== null ? (message as { content?: unknown }).content : "";
    characters += typeof content === "string" ? content.length : JSON.stringify(content ?? "").length;
  }
  return Math.ceil(characters / 3.5);
}

/**
 * before_prompt_build: appends the run's knowledge block (the prefetched /retrieve, else one of its own) to the
 * system context, exactly as Cortex rendered it for the model that will read it. Any failure means no injection;
 * the run proceeds.
 */
export function injectionHook(deps: InjectionHookDeps): HookHandlers["before_prompt_build"] {
  const { config, state, principalOf, retrieve, logger } = deps;
  const counters = state.counters;
  return async (event, ctx) => {
    try {
      if (ctx.sessionKey !== undefined)
        rememberTranscriptTokens(state, ctx.sessionKey, transcriptTokens(event.messages));
      // A run without a block gives its reflection nothing to act on by id (not an earlier run's block).
      if (ctx.sessionKey !== undefined)
        rememberReflectionTargets(state.reflectionTargets, ctx.sessionKey, []);
      const skip = (reason: string) => {
        increment(counters.injectionSkips, reason);
        // Why a run got no knowledge is the first question when recall seems off; failures are logged above.
        if (!reason.startsWith("cortex_") || reason === "cortex_degraded") {
          logEvent(logger, "info", "injection_skipped", { sessionKey: ctx.sessionKey, reason });
        }
        return undefined;
      };
      if (!config.injection.enabled) return skip("disabled");
      if (isReflectionSession(ctx.sessionKey)) return skip("reflection_run");
      const principal = principalOf(ctx);
      if (!principal.ok) return skip(principal.reason);
      const key = runKey(ctx);
      const prefetched = key === undefined ? undefined : state.prefetch.get(key);
      if (key !== undefined) state.prefetch.delete(key);
      // The provider the run resolved to (after every plugin's before_model_resolve) decides what Cortex may put
      // in the bundle; unknown counts as cloud.
      const provider = ctx.modelProviderId;
      const modelLocation =
        provider !== undefined
          ? modelLocationOf(provider, config.escalation.localProviders)
          : (prefetched?.decision?.target ?? "cloud");
      // A bundle asked for a local model may hold contact details: a run that ended up in the cloud asks again.
      const usable =
        prefetched !== undefined && !(prefetched.modelLocation === "local" && modelLocation === "cloud")
          ? prefetched
          : undefined;
      const outcome = await (usable?.outcome ??
        retrieve(principal.principal, event.currentUserMessage ?? event.prompt, modelLocation));
      if (outcome.status === "failed") {
        if (outcome.reason === "timeout") counters.retrieveTimeouts += 1;
        else counters.retrieveErrors += 1;
        logEvent(logger, "warn", "retrieve_failed", {
          sessionKey: ctx.sessionKey,
          message: outcome.message,
        });
        return skip(`cortex_${outcome.reason}`);
      }
      // The model that will read this block decides what may be in it: whatever the escalation said, a
      // provider that is not local (or not known) gets no private item without consent. Cortex already left them
      // out of a bundle asked for the cloud; a bundle that still holds one is not injected at all, since the
      // plugin injects Cortex's text as is and never renders a block of its own.
      const withheld = itemsWithheldFrom(
        outcome.bundle,
        modelLocation,
        config.escalation.allowPrivateToCloud,
      );
      if (withheld > 0) {
        counters.privateItemsWithheld += withheld;
        return skip("private_knowledge");
      }
      const built = knowledgeBlock(outcome.bundle, config.injection.tokenCeiling);
      if (!built.ok) {
        const empty = built.reason === "nothing_retrieved" && outcome.bundle.degraded;
        return skip(empty ? "cortex_degraded" : built.reason);
      }
      counters.injections += 1;
      // Remembered before it is handed over: this run's captures must not send it back to Cortex.
      rememberInjection(state.injected, principal.principal, built.block);
      // What the run's reflection may reinforce, weaken, contradict, correct or link by id.
      if (ctx.sessionKey !== undefined)
        rememberReflectionTargets(
          state.reflectionTargets,
          ctx.sessionKey,
          shownTargets(outcome.bundle.facts),
        );
      return { appendSystemContext: built.block.text };
    } catch (error) {
      increment(counters.hookErrors, "before_prompt_build");
      logEvent(logger, "error", "hook_failed", {
        hook: "before_prompt_build",
        message: errorMessage(error),
      });
      return undefined;
    }
  };
}
