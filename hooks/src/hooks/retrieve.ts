import { retrieveLimits } from "@remram/contract";
import type { PluginConfig } from "../config.js";
import { type CortexClient, describeFailure } from "../cortex-client.js";
import { RetrieveResponseSchema } from "../cortex-contract.js";
import type { ModelLocation } from "../escalation.js";
import { retrieveIntent } from "../injection.js";
import { type Histogram, observe } from "../metrics.js";
import type { AgentHookContext } from "../openclaw-api.js";
import type { Principal } from "../principal.js";
import type { RetrieveOutcome } from "../shared-state.js";

/**
 * One /retrieve for a principal's request, for a model that runs locally or in the cloud (Cortex keeps contact
 * details, and private items unless the operator allows them there, out of a cloud model's bundle); Cortex failing
 * or timing out is an outcome, not an exception.
 */
export type Retrieve = (
  principal: Principal,
  requestText: string,
  modelLocation: ModelLocation,
) => Promise<RetrieveOutcome>;

/** The key a run's prefetched retrieval waits under, from before_model_resolve to before_prompt_build. */
export function runKey(ctx: AgentHookContext): string | undefined {
  return ctx.runId ?? ctx.sessionKey;
}

export function cortexRetriever(
  client: CortexClient,
  injection: PluginConfig["injection"],
  latency: Histogram,
  allowPrivateToCloud = false,
): Retrieve {
  return async (principal, requestText, modelLocation) => {
    // Nothing to search for (an attachment-only turn): an empty bundle, without a round trip.
    if (requestText.trim() === "") return { status: "ok", bundle: RetrieveResponseSchema.parse({}) };
    const started = performance.now();
    // Cortex caps the request text; the end of a long prompt is usually the actual question.
    const text =
      requestText.length > retrieveLimits.maxRequestChars
        ? requestText.slice(-retrieveLimits.maxRequestChars)
        : requestText;
    const intent = retrieveIntent(text);
    const result = await client.retrieve({
      principal,
      requestText: text,
      ...(intent !== undefined && { intent }),
      tokenBudget: Math.min(injection.tokenCeiling, retrieveLimits.maxTokenBudget),
      mode: injection.mode,
      modelLocation,
      // Sent only when set: a Cortex from before the field would refuse it, and false is its default.
      ...(allowPrivateToCloud && { allowPrivateToCloud }),
    });
    observe(latency, (performance.now() - started) / 1000);
    if (result.ok) return { status: "ok", bundle: result.value };
    return {
      status: "failed",
      reason: result.failure.kind === "timeout" ? "timeout" : "error",
      message: describeFailure(result.failure),
    };
  };
}
