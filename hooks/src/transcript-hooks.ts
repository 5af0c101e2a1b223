import type { TranscriptArchiveRequestInput } from "@remram/contract";
import type { PluginConfig } from "./config.js";
import type { DurableQueue } from "./durable-queue.js";
import { type InjectionLedger, injectedFor, stripInjected } from "./injected-content.js";
import { errorMessage, logEvent } from "./log.js";
import { type Counters, increment } from "./metrics.js";
import type { AgentHookContext, HostLogger, SessionEndEvent } from "./openclaw-api.js";
import { derivePrincipal, isReflectionSession, type Principal } from "./principal.js";
import {
  mergeTranscript,
  type TranscriptEndReason,
  transcriptMessages,
  transcriptRequests,
} from "./transcript.js";
import type { StagedTranscript, TranscriptStaging } from "./transcript-staging.js";

/**
 * Transcripts into the archive (seed 004), the hooks' side. agent_end, before_compaction and before_reset stage
 * what the session's messages hold so far (injected knowledge stripped); session_end, for every reason but
 * `deleted`, seals the not yet queued range into the durable transcript queue, which the service delivers to
 * Cortex's /archive/transcripts. Shutdown and restart share OpenClaw's 2 s drain budget: sealing only writes
 * local files, and the queue is sent after the next start. A deleted session's transcript is discarded, queued
 * parts included.
 */

export interface TranscriptDeps {
  config: Pick<PluginConfig, "archive" | "principals">;
  counters: Counters;
  injected: InjectionLedger;
  /** Opened on first use, like the queues. */
  staging: () => TranscriptStaging;
  transcriptQueue: () => DurableQueue<TranscriptArchiveRequestInput>;
  logger: HostLogger;
}

/** A session that goes on after this end keeps its staged transcript; only the unqueued rest is sent next time. */
const sessionContinues: readonly string[] = ["shutdown", "restart"];

function stage(deps: TranscriptDeps, hook: string, messages: unknown, ctx: AgentHookContext): void {
  const { config, counters } = deps;
  if (!config.archive.enabled || !Array.isArray(messages) || ctx.sessionId === undefined) return;
  // The plugin's own reflection runs, and runs no person started, are no conversation of anyone's.
  if (isReflectionSession(ctx.sessionKey) || ctx.trigger === "cron" || ctx.trigger === "heartbeat") return;
  // A group's transcript has several authors and no single owner: never archived (groups get "skip" here).
  const principal = derivePrincipal(ctx, config.principals, "skip");
  if (!principal.ok) return;
  const shown = injectedFor(deps.injected, principal.principal);
  let stripped = 0;
  const snapshot = transcriptMessages(messages, (text) => {
    const result = stripInjected(text, shown);
    stripped += result.stripped;
    return result.text;
  });
  if (stripped > 0) increment(counters.injectedStripped, "transcript", stripped);
  const staging = deps.staging();
  const staged = staging.read(ctx.sessionId);
  const merged = mergeTranscript(staged?.messages ?? [], snapshot);
  if (staged !== undefined && merged.length === staged.messages.length) return;
  staging.write({
    sessionId: ctx.sessionId,
    ...(ctx.sessionKey === undefined ? {} : { sessionKey: ctx.sessionKey }),
    principal: principal.principal,
    channel: staged?.channel ?? ctx.channel ?? "unknown",
    messages: merged,
    archivedThrough: staged?.archivedThrough ?? 0,
    updatedAt: new Date().toISOString(),
  });
  increment(counters.transcripts, `staged_${hook}`);
}

/** agent_end, before_compaction, before_reset: stage the messages the event carries. */
export function transcriptStageHook(
  deps: TranscriptDeps,
  hook: "agent_end" | "before_compaction" | "before_reset",
): (event: { messages?: unknown }, ctx: AgentHookContext) => undefined {
  return (event, ctx) => {
    try {
      stage(deps, hook, event.messages, ctx);
    } catch (error) {
      increment(deps.counters.hookErrors, `${hook}_transcript`);
      logEvent(deps.logger, "error", "hook_failed", { hook, message: errorMessage(error) });
    }
    return undefined;
  };
}

/** Queue the staged range not queued yet; true when something was queued. */
function queueRange(
  deps: TranscriptDeps,
  staged: StagedTranscript,
  reason: TranscriptEndReason,
  endedAt: Date,
): number {
  const range = staged.messages.slice(staged.archivedThrough);
  if (range.length === 0) return 0;
  const { archive } = deps.config;
  const sends = transcriptRequests({
    principal: staged.principal as Principal,
    sessionId: staged.sessionId,
    channel: staged.channel,
    endReason: reason,
    endedAt,
    messages: range,
    privacy: archive.privacy,
    allowRecall: archive.allowRecall,
    limits: { maxMessages: archive.maxMessagesPerPart, maxChars: archive.maxCharsPerPart },
  });
  const queue = deps.transcriptQueue();
  for (const send of sends) {
    const outcome = queue.enqueue(send.key, send.body, endedAt);
    increment(deps.counters.transcripts, outcome.status === "queued" ? "queued" : outcome.status);
    if (outcome.status === "queued" && outcome.evicted.length > 0)
      increment(deps.counters.queueDrops, "transcript_full_dropped_oldest", outcome.evicted.length);
    if (outcome.status === "dropped_full")
      increment(deps.counters.queueDrops, "transcript_full_dropped_newest");
  }
  return sends.length;
}

/** A deleted session: its staged transcript and any part still waiting in the queue are discarded. */
function discard(deps: TranscriptDeps, sessionId: string): void {
  deps.staging().remove(sessionId);
  const queue = deps.transcriptQueue();
  for (const entry of queue.peek(queue.depth)) {
    if (entry.payload.sessionId === sessionId) queue.remove(entry);
  }
  increment(deps.counters.transcripts, "deleted_discarded");
}

/** session_end: seal the session's transcript into the durable queue (fast, local only). */
export function transcriptSealHook(
  deps: TranscriptDeps,
): (event: SessionEndEvent, ctx: { sessionId?: string; sessionKey?: string }) => undefined {
  return (event) => {
    try {
      if (!deps.config.archive.enabled) return undefined;
      const reason = event.reason ?? "unknown";
      if (reason === "deleted") {
        discard(deps, event.sessionId);
        return undefined;
      }
      const staging = deps.staging();
      const staged = staging.read(event.sessionId);
      const parts = staged === undefined ? 0 : queueRange(deps, staged, reason, new Date());
      if (staged !== undefined && sessionContinues.includes(reason)) {
        staging.write({
          ...staged,
          archivedThrough: staged.messages.length,
          updatedAt: new Date().toISOString(),
        });
      } else if (staged !== undefined) staging.remove(event.sessionId);
      // One line per session end: why it ended and what went to the queue (nothing when no turn was staged).
      logEvent(deps.logger, "info", "transcript_sealed", {
        sessionId: event.sessionId,
        reason,
        staged: staged !== undefined,
        parts,
      });
    } catch (error) {
      increment(deps.counters.hookErrors, "session_end");
      logEvent(deps.logger, "error", "hook_failed", { hook: "session_end", message: errorMessage(error) });
    }
    return undefined;
  };
}

/**
 * gateway_stop (shutdown, restart, a plugin replacement; 5 s budget): OpenClaw's own shutdown drain emits
 * session_end only for the sessions it tracked (in 2026.9.6 not every HTTP session), so every staged session's
 * unqueued range is queued here as well, and its staging kept: the session goes on after the restart. Local disk
 * only; a range session_end already queued is not queued again.
 */
export function transcriptShutdownHook(
  deps: TranscriptDeps,
): (event: { reason?: string }, ctx: unknown) => undefined {
  return (event) => {
    try {
      if (!deps.config.archive.enabled) return undefined;
      const reason: TranscriptEndReason = /restart/i.test(event.reason ?? "") ? "restart" : "shutdown";
      const staging = deps.staging();
      const now = new Date();
      let parts = 0;
      for (const staged of staging.all()) {
        if (staged.archivedThrough >= staged.messages.length) continue;
        parts += queueRange(deps, staged, reason, now);
        staging.write({ ...staged, archivedThrough: staged.messages.length, updatedAt: now.toISOString() });
      }
      logEvent(deps.logger, "info", "transcripts_sealed_at_stop", { reason, parts });
    } catch (error) {
      increment(deps.counters.hookErrors, "gateway_stop");
      logEvent(deps.logger, "error", "hook_failed", { hook: "gateway_stop", message: errorMessage(error) });
    }
    return undefined;
  };
}

/**
 * Sessions staged but never ended (the gateway died without a session_end): after `staleAfterHours` without a
 * turn their unqueued range is queued as ended for an unknown reason. Run by the service at start.
 */
export function queueStaleTranscripts(deps: TranscriptDeps, now: Date): number {
  if (!deps.config.archive.enabled) return 0;
  const staging = deps.staging();
  let queued = 0;
  for (const staged of staging.stale(deps.config.archive.staleAfterHours * 3_600_000, now.getTime())) {
    queued += queueRange(deps, staged, "unknown", now);
    staging.remove(staged.sessionId);
    increment(deps.counters.transcripts, "stale_sealed");
  }
  return queued;
}
