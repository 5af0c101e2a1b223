import { captureToolResult } from "../capture.js";
import type { PluginConfig } from "../config.js";
import type { ToolResultEvent } from "../cortex-contract.js";
import type { DurableQueue } from "../durable-queue.js";
import { type InjectionLedger, injectedFor, stripInjected } from "../injected-content.js";
import { errorMessage, logEvent } from "../log.js";
import { type Counters, increment } from "../metrics.js";
import type { HookHandlers, HostLogger } from "../openclaw-api.js";
import { isReflectionSession, type PrincipalLookup } from "../principal.js";

export interface CaptureHookDeps {
  config: Pick<PluginConfig, "capture">;
  counters: Counters;
  /** What was injected per principal: removed from the tool result before it is queued. */
  injected: InjectionLedger;
  principalOf: PrincipalLookup;
  /** Opened on first use: a plugin instance that never sees a tool result touches no disk. */
  captureQueue: () => DurableQueue<ToolResultEvent>;
  logger: HostLogger;
}

/**
 * tool_result_persist: appends the tool result, as a Cortex `tool_result` event, to the durable capture queue.
 * Synchronous (the host ignores a Promise); it never changes the persisted message, even when it fails.
 */
export function captureHook(deps: CaptureHookDeps): HookHandlers["tool_result_persist"] {
  const { config, counters, injected, principalOf, captureQueue, logger } = deps;
  return (event, ctx) => {
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
      const shown = injectedFor(injected, principal.principal);
      let stripped = 0;
      const captured = captureToolResult(
        event,
        ctx,
        principal.principal,
        sessionKey,
        config.capture,
        new Date(),
        (text) => {
          const result = stripInjected(text, shown);
          stripped += result.stripped;
          return result.text;
        },
      );
      if (stripped > 0) increment(counters.injectedStripped, "tool_result", stripped);
      if (!captured.ok) {
        increment(counters.captureSkips, captured.reason);
        return undefined;
      }
      const queue = captureQueue();
      const outcome = queue.enqueue(captured.item.provenanceKey, captured.item, new Date());
      if (outcome.status === "duplicate") counters.captureDuplicates += 1;
      else if (outcome.status === "dropped_full") {
        increment(counters.queueDrops, "capture_full_dropped_newest");
        logEvent(logger, "warn", "queue_drop", {
          queue: "capture",
          policy: "drop-newest",
          provenanceKey: captured.item.provenanceKey,
          depth: queue.depth,
        });
      } else {
        counters.captures += 1;
        for (const evicted of outcome.evicted) {
          increment(counters.queueDrops, "capture_full_dropped_oldest");
          logEvent(logger, "warn", "queue_drop", {
            queue: "capture",
            policy: "drop-oldest",
            provenanceKey: evicted,
          });
        }
      }
    } catch (error) {
      increment(counters.hookErrors, "tool_result_persist");
      logEvent(logger, "error", "hook_failed", {
        hook: "tool_result_persist",
        message: errorMessage(error),
      });
    }
    return undefined;
  };
}
