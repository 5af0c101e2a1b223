import type { RetrieveResponse } from "./cortex-contract.js";
import type { DurableQueue } from "./durable-queue.js";
import type { EscalationDecision, ModelLocation } from "./escalation.js";
import type { InjectionLedger } from "./injected-content.js";
import { type Counters, emptyCounters } from "./metrics.js";
import type { ReflectionTargetLedger } from "./reflection-targets.js";

/**
 * State shared by every plugin instance in the gateway process. OpenClaw calls register() several times,
 * each on a fresh evaluation of this module ("full" for services, "discovery" instances for the turn hooks;
 * research note openclaw-hooks.md §1), so module variables are not shared: this lives on globalThis under a
 * versioned symbol. Only plain data and objects whose methods need no `instanceof` go here.
 */

export type RetrieveOutcome =
  | { status: "ok"; bundle: RetrieveResponse }
  | { status: "failed"; reason: "timeout" | "error"; message: string };

/** A retrieval started in before_model_resolve and consumed by before_prompt_build of the same run. */
export interface PrefetchEntry {
  startedAt: number;
  /** The model location the bundle was asked for; a bundle for a local model never reaches a cloud one. */
  modelLocation: ModelLocation;
  outcome: Promise<RetrieveOutcome>;
  decision?: EscalationDecision;
}

export interface ServiceHandles {
  stop: () => Promise<void>;
}

export interface SharedState {
  counters: Counters;
  prefetch: Map<string, PrefetchEntry>;
  /** Estimated transcript tokens per session, as of its last prompt build (for context pressure). */
  transcriptTokens: Map<string, number>;
  /** What was injected, per principal: the capture paths remove it (injected-content.ts). */
  injected: InjectionLedger;
  queues: Map<string, DurableQueue<unknown>>;
  reflectionAttempts: Map<string, number>;
  /** Per session key, the facts its latest injected block showed: what its reflection may act on by id. */
  reflectionTargets: ReflectionTargetLedger;
  /** Per reflection job, replies that did not validate so far (one is asked again, the second drops the job). */
  reflectionInvalidReplies: Map<string, number>;
  service?: ServiceHandles;
}

const stateKey = Symbol.for("remram.hooks.shared-state.v1");
const prefetchTtlMs = 120_000;
const maxTrackedSessions = 10_000;

export function sharedState(): SharedState {
  const holder = globalThis as { [stateKey]?: SharedState };
  holder[stateKey] ??= {
    counters: emptyCounters(),
    prefetch: new Map(),
    transcriptTokens: new Map(),
    injected: new Map(),
    queues: new Map(),
    reflectionAttempts: new Map(),
    reflectionTargets: new Map(),
    reflectionInvalidReplies: new Map(),
  };
  return holder[stateKey];
}

/** Forget prefetches nobody consumed (a run that failed between the two hooks). */
export function sweepPrefetch(state: Pick<SharedState, "prefetch">, now: number): void {
  for (const [key, entry] of state.prefetch) {
    if (now - entry.startedAt > prefetchTtlMs) state.prefetch.delete(key);
  }
}

export function rememberTranscriptTokens(
  state: Pick<SharedState, "transcriptTokens">,
  sessionKey: string,
  tokens: number,
): void {
  state.transcriptTokens.delete(sessionKey);
  state.transcriptTokens.set(sessionKey, tokens);
  if (state.transcriptTokens.size > maxTrackedSessions) {
    const oldest = state.transcriptTokens.keys().next().value;
    if (oldest !== undefined) state.transcriptTokens.delete(oldest);
  }
}

/** One DurableQueue per directory for the whole process, whichever instance asks first creates it. */
export function sharedQueue<T>(
  state: SharedState,
  directory: string,
  create: () => DurableQueue<T>,
): DurableQueue<T> {
  const existing = state.queues.get(directory);
  if (existing !== undefined) return existing as DurableQueue<T>;
  const queue = create();
  state.queues.set(directory, queue as DurableQueue<unknown>);
  return queue;
}
