import { createHash, randomUUID } from "node:crypto";
import type { PluginConfig } from "../config.js";
import type { DurableQueue } from "../durable-queue.js";
import { type InjectionLedger, injectedFor, stripInjected } from "../injected-content.js";
import { errorMessage, logEvent } from "../log.js";
import { type Counters, increment } from "../metrics.js";
import type { HookHandlers, HostLogger } from "../openclaw-api.js";
import { isReflectionSession, type PrincipalLookup } from "../principal.js";
import { buildReflectionJob, type ReflectionJob } from "../reflection.js";
import { reflectionSkipReason } from "../reflection-gate.js";
import { type ReflectionTargetLedger, takeReflectionTargets } from "../reflection-targets.js";

export interface ReflectionTriggerDeps {
  config: Pick<PluginConfig, "reflection">;
  counters: Counters;
  /** What was injected per principal: removed from the turn before a reflection reads it. */
  injected: InjectionLedger;
  /** What each session's injected block showed: the reflection may act on those objects by id. */
  reflectionTargets: ReflectionTargetLedger;
  principalOf: PrincipalLookup;
  /** Opened on first use: a plugin instance that never ends a run touches no disk. */
  reflectionQueue: () => DurableQueue<ReflectionJob>;
  logger: HostLogger;
}

/**
 * agent_end: queues a reflection job for a successful user turn. Only queues: a subagent run started from
 * inside agent_end is refused, so the service runs the job (research note openclaw-hooks.md §3).
 */
export function reflectionTriggerHook(deps: ReflectionTriggerDeps): HookHandlers["agent_end"] {
  const { config, counters, injected, reflectionTargets, principalOf, reflectionQueue, logger } = deps;
  return (event, ctx) => {
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
      const shown = injectedFor(injected, principal.principal);
      let stripped = 0;
      const job = buildReflectionJob({
        jobId,
        principal: principal.principal,
        sessionKey: ctx.sessionKey,
        messages: event.messages,
        maxChars: config.reflection.maxTranscriptChars,
        now: new Date(),
        strip: (text) => {
          const result = stripInjected(text, shown);
          stripped += result.stripped;
          return result.text;
        },
        ...(event.runId === undefined ? {} : { runId: event.runId }),
        targets: takeReflectionTargets(reflectionTargets, ctx.sessionKey),
      });
      if (stripped > 0) increment(counters.injectedStripped, "reflection_input", stripped);
      if (job === undefined) return undefined;
      // Small talk, bare questions and passing states hold nothing to keep: no model run is spent on them.
      const skip = reflectionSkipReason(job.userText ?? "");
      if (skip !== undefined) {
        increment(counters.reflections, `skipped_${skip}`);
        return undefined;
      }
      const queue = reflectionQueue();
      const outcome = queue.enqueue(job.jobId, job, new Date());
      if (outcome.status === "queued") counters.reflectionsEnqueued += 1;
      if (outcome.status === "dropped_full") increment(counters.queueDrops, "reflection_full_dropped_newest");
      if (outcome.status === "queued" && outcome.evicted.length > 0) {
        increment(counters.queueDrops, "reflection_full_dropped_oldest", outcome.evicted.length);
      }
    } catch (error) {
      increment(counters.hookErrors, "agent_end");
      logEvent(logger, "error", "hook_failed", { hook: "agent_end", message: errorMessage(error) });
    }
    return undefined;
  };
}
