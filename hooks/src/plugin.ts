import { createHash, randomUUID } from "node:crypto";
import { captureToolResult } from "./capture.js";
import { type PluginConfig, parsePluginConfig } from "./config.js";
import { type CortexClient, createCortexClient, describeFailure } from "./cortex-client.js";
import { cortexLimits, RetrieveResponseSchema } from "./cortex-contract.js";
import {
  decideEscalation,
  type EscalationDecision,
  modelOverrideFor,
  reflectionModelOverride,
} from "./escalation.js";
import { blocksCloud, filterForModel, renderKnowledgeBlock } from "./injection.js";
import { errorMessage, logEvent, pluginId } from "./log.js";
import { builtInMemoryConflicts } from "./memory-guard.js";
import { type Histogram, increment, observe } from "./metrics.js";
import type { AgentHookContext, HostPluginApi } from "./openclaw-api.js";
import { derivePrincipal, isReflectionSession, type Principal } from "./principal.js";
import { openQueues, type Queues } from "./queues.js";
import { buildReflectionJob } from "./reflection.js";
import { startBackgroundWork } from "./service.js";
import {
  type PrefetchEntry,
  type RetrieveOutcome,
  rememberTranscriptTokens,
  sharedState,
  sweepPrefetch,
} from "./shared-state.js";

export { pluginId };

function runKey(ctx: AgentHookContext): string | undefined {
  return ctx.runId ?? ctx.sessionKey;
}

async function retrieveFor(
  client: CortexClient,
  config: PluginConfig,
  principal: Principal,
  requestText: string,
  latency: Histogram,
): Promise<RetrieveOutcome> {
  // Nothing to search for (an attachment-only turn): an empty bundle, without a round trip.
  if (requestText.trim() === "") return { status: "ok", bundle: RetrieveResponseSchema.parse({}) };
  const started = performance.now();
  const result = await client.retrieve({
    principal,
    // Cortex caps the request text; the end of a long prompt is usually the actual question.
    requestText:
      requestText.length > cortexLimits.maxRequestChars
        ? requestText.slice(-cortexLimits.maxRequestChars)
        : requestText,
    tokenBudget: Math.min(config.injection.tokenCeiling, cortexLimits.maxTokenBudget),
    mode: config.injection.mode,
  });
  observe(latency, (performance.now() - started) / 1000);
  if (result.ok) return { status: "ok", bundle: result.value };
  return {
    status: "failed",
    reason: result.failure.kind === "timeout" ? "timeout" : "error",
    message: describeFailure(result.failure),
  };
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
 * register() must stay synchronous and free of side effects beyond registrations: it runs once per plugin
 * instance, and several instances live in one gateway. Timers and sockets start only in the service.
 */
export function registerRemramHooks(api: HostPluginApi): void {
  let config: PluginConfig;
  try {
    config = parsePluginConfig(api.pluginConfig);
  } catch (error) {
    logEvent(api.logger, "error", "config_invalid", { message: errorMessage(error) });
    return;
  }
  const conflicts = builtInMemoryConflicts(api.config);
  if (conflicts.length > 0 && !config.allowBuiltInMemory) {
    // Refuse to run beside a second retrieval authority; registering nothing keeps the gateway itself up.
    logEvent(api.logger, "error", "refusing_to_start", {
      message:
        "remram-hooks refuses to start: OpenClaw's built-in memory would be a second retrieval authority. " +
        `${conflicts.join("; ")}. Or set plugins.entries.${pluginId}.config.allowBuiltInMemory to true.`,
    });
    return;
  }

  const state = sharedState();
  const counters = state.counters;
  const client = createCortexClient(config.cortex);
  const stateDir = api.runtime.state.resolveStateDir();
  let queues: Queues | undefined;
  // Opened on first use, not in register(): discovery passes that never see a turn touch no disk.
  const getQueues = (): Queues => {
    queues ??= openQueues(state, config, stateDir);
    return queues;
  };
  const principalOf = (ctx: { sessionKey?: string; agentId?: string }) =>
    derivePrincipal(ctx, config.principals, config.injection.groupSessions);

  api.on("before_model_resolve", async (event, ctx) => {
    let decision: EscalationDecision;
    try {
      if (isReflectionSession(ctx.sessionKey)) return reflectionModelOverride(config);
      const now = Date.now();
      sweepPrefetch(state, now);
      const key = runKey(ctx);
      const principal = principalOf(ctx);
      const entry: PrefetchEntry | undefined =
        key !== undefined && principal.ok && config.injection.enabled
          ? {
              startedAt: now,
              outcome: retrieveFor(
                client,
                config,
                principal.principal,
                event.prompt,
                counters.retrieveLatency,
              ),
            }
          : undefined;
      if (key !== undefined && entry !== undefined) state.prefetch.set(key, entry);
      const escalationPossible = config.escalation.enabled && config.escalation.cloud !== undefined;
      // Waiting for the bundle only matters when it could veto a cloud model; it is bounded by its timeout.
      const outcome = escalationPossible && entry !== undefined ? await entry.outcome : undefined;
      const bundle = outcome?.status === "ok" ? outcome.bundle : undefined;
      const rendered =
        bundle === undefined ? undefined : renderKnowledgeBlock(bundle, config.injection.tokenCeiling);
      decision = decideEscalation(
        {
          prompt: event.prompt,
          attachmentKinds: (event.attachments ?? []).map((attachment) => attachment.kind),
          transcriptTokens:
            ctx.sessionKey === undefined ? 0 : (state.transcriptTokens.get(ctx.sessionKey) ?? 0),
          knowledgeTokens: rendered?.tokens ?? 0,
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
    logEvent(api.logger, "info", "escalation_decision", {
      sessionKey: ctx.sessionKey,
      runId: ctx.runId,
      target: decision.target,
      reason: decision.reason,
      ...decision.detail,
    });
    return modelOverrideFor(decision, config.escalation);
  });

  api.on("before_prompt_build", async (event, ctx) => {
    try {
      if (ctx.sessionKey !== undefined)
        rememberTranscriptTokens(state, ctx.sessionKey, transcriptTokens(event.messages));
      const skip = (reason: string) => {
        increment(counters.injectionSkips, reason);
        // Why a run got no knowledge is the first question when recall seems off; failures are logged above.
        if (!reason.startsWith("cortex_") || reason === "cortex_degraded") {
          logEvent(api.logger, "info", "injection_skipped", { sessionKey: ctx.sessionKey, reason });
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
      const outcome = await (prefetched?.outcome ??
        retrieveFor(
          client,
          config,
          principal.principal,
          event.currentUserMessage ?? event.prompt,
          counters.retrieveLatency,
        ));
      if (outcome.status === "failed") {
        if (outcome.reason === "timeout") counters.retrieveTimeouts += 1;
        else counters.retrieveErrors += 1;
        logEvent(api.logger, "warn", "retrieve_failed", {
          sessionKey: ctx.sessionKey,
          message: outcome.message,
        });
        return skip(`cortex_${outcome.reason}`);
      }
      // The model that will read this block decides what may be in it: whatever the escalation said, a
      // provider that is not local gets no private item without consent.
      const provider = ctx.modelProviderId;
      const target =
        provider !== undefined
          ? config.escalation.localProviders.includes(provider)
            ? "local"
            : "cloud"
          : (prefetched?.decision?.target ?? "local");
      const visible = filterForModel(outcome.bundle, target, config.escalation.allowPrivateToCloud);
      counters.privateItemsWithheld +=
        outcome.bundle.facts.length +
        outcome.bundle.chunks.length -
        visible.facts.length -
        visible.chunks.length;
      const block = renderKnowledgeBlock(visible, config.injection.tokenCeiling);
      if (block === undefined) return skip(outcome.bundle.degraded ? "cortex_degraded" : "nothing_retrieved");
      counters.injections += 1;
      return { appendSystemContext: block.text };
    } catch (error) {
      increment(counters.hookErrors, "before_prompt_build");
      logEvent(api.logger, "error", "hook_failed", {
        hook: "before_prompt_build",
        message: errorMessage(error),
      });
      return undefined;
    }
  });

  api.on("tool_result_persist", (event, ctx) => {
    try {
      const sessionKey = ctx.sessionKey;
      if (isReflectionSession(sessionKey)) {
        increment(counters.captureSkips, "reflection_run");
        return undefined;
      }
      const principal = principalOf(ctx);
      if (!principal.ok || sessionKey === undefined) {
        increment(counters.captureSkips, principal.ok ? "no_session_key" : principal.reason);
        return undefined;
      }
      const captured = captureToolResult(
        event,
        ctx,
        principal.principal,
        sessionKey,
        config.capture,
        new Date(),
      );
      if (!captured.ok) {
        increment(counters.captureSkips, captured.reason);
        return undefined;
      }
      const queue = getQueues().capture;
      const outcome = queue.enqueue(captured.item.provenanceKey, captured.item, new Date());
      if (outcome.status === "duplicate") counters.captureDuplicates += 1;
      else if (outcome.status === "dropped_full") {
        increment(counters.queueDrops, "capture_full_dropped_newest");
        logEvent(api.logger, "warn", "queue_drop", {
          queue: "capture",
          policy: "drop-newest",
          provenanceKey: captured.item.provenanceKey,
          depth: queue.depth,
        });
      } else {
        counters.captures += 1;
        for (const evicted of outcome.evicted) {
          increment(counters.queueDrops, "capture_full_dropped_oldest");
          logEvent(api.logger, "warn", "queue_drop", {
            queue: "capture",
            policy: "drop-oldest",
            provenanceKey: evicted,
          });
        }
      }
    } catch (error) {
      increment(counters.hookErrors, "tool_result_persist");
      logEvent(api.logger, "error", "hook_failed", {
        hook: "tool_result_persist",
        message: errorMessage(error),
      });
    }
    return undefined;
  });

  api.on("agent_end", (event, ctx) => {
    try {
      if (!config.reflection.enabled) return undefined;
      // Never reflect on a reflection: its own agent_end comes back here with the reflection session key.
      if (isReflectionSession(ctx.sessionKey)) {
        increment(counters.reflections, "skipped_own_run");
        return undefined;
      }
      if (!event.success || ctx.trigger === "cron" || ctx.trigger === "heartbeat") return undefined;
      const principal = principalOf(ctx);
      if (!principal.ok || ctx.sessionKey === undefined) return undefined;
      const jobId = createHash("sha256")
        .update(`${ctx.sessionKey}\u0000${event.runId ?? ctx.runId ?? randomUUID()}`)
        .digest("hex")
        .slice(0, 32);
      const job = buildReflectionJob({
        jobId,
        principal: principal.principal,
        sessionKey: ctx.sessionKey,
        messages: event.messages,
        maxChars: config.reflection.maxTranscriptChars,
        now: new Date(),
        ...(event.runId === undefined ? {} : { runId: event.runId }),
      });
      if (job === undefined) return undefined;
      const queue = getQueues().reflection;
      const outcome = queue.enqueue(job.jobId, job, new Date());
      if (outcome.status === "queued") counters.reflectionsEnqueued += 1;
      if (outcome.status === "dropped_full") increment(counters.queueDrops, "reflection_full_dropped_newest");
      if (outcome.status === "queued" && outcome.evicted.length > 0) {
        increment(counters.queueDrops, "reflection_full_dropped_oldest", outcome.evicted.length);
      }
    } catch (error) {
      increment(counters.hookErrors, "agent_end");
      logEvent(api.logger, "error", "hook_failed", { hook: "agent_end", message: errorMessage(error) });
    }
    return undefined;
  });

  api.registerService({
    id: pluginId,
    reload: { configPrefixes: [`plugins.entries.${pluginId}`] },
    start: async (ctx) => {
      await state.service?.stop();
      state.service = startBackgroundWork({
        api,
        logger: ctx.logger,
        config,
        client,
        state,
        queues: getQueues(),
      });
    },
    stop: async () => {
      await state.service?.stop();
      state.service = undefined;
    },
  });
}
