import type { PluginConfig } from "./config.js";
import { type CortexClient, describeFailure } from "./cortex-client.js";
import type { ExplicitSaveBody } from "./cortex-contract.js";
import type { DurableQueue } from "./durable-queue.js";
import { detectExplicitSave, type ExplicitSaveDirective, previousUserText } from "./explicit-save.js";
import { renderSaveContext, type SaveOutcome, saveRequestFor } from "./explicit-save-reply.js";
import { runKey } from "./hooks/retrieve.js";
import { type InjectionLedger, rememberInjection } from "./injected-content.js";
import { errorMessage, logEvent } from "./log.js";
import { type Counters, increment } from "./metrics.js";
import type { AgentHookContext, HookHandlers, HostLogger } from "./openclaw-api.js";
import { isReflectionSession, type Principal, type PrincipalLookup } from "./principal.js";
import { isRejection } from "./service.js";

/**
 * The explicit save of a user turn ("remember that …"): started in before_model_resolve, so Cortex stores it while
 * the gateway loads the session, and awaited in before_prompt_build, whose system context then tells the model
 * what happened. The run waits at most `explicitSave.waitMs` from the save's start; past it (Cortex slow or down)
 * the save goes to a durable queue the service delivers, and the reply says it will be saved.
 */

export interface ExplicitSaveDeps {
  config: Pick<PluginConfig, "explicitSave">;
  counters: Counters;
  /** Where the save is recorded as injected: reflection must not extract the same statement a second time. */
  injected: InjectionLedger;
  principalOf: PrincipalLookup;
  client: Pick<CortexClient, "remember">;
  /** Opened on first use: a plugin instance that never sees a save touches no disk. */
  saveQueue: () => DurableQueue<ExplicitSaveBody>;
  logger: HostLogger;
  now?: () => number;
}

interface PendingSave {
  startedAt: number;
  directive: ExplicitSaveDirective;
  statement: string;
  householdUnavailable: boolean;
  outcome: Promise<SaveOutcome>;
}

/** Saves started in before_model_resolve, by run, for before_prompt_build (both run on discovery instances). */
const pendingKey = Symbol.for("remram.hooks.explicit-save.v1");
const pendingTtlMs = 120_000;

function pendingSaves(): Map<string, PendingSave> {
  const holder = globalThis as { [pendingKey]?: Map<string, PendingSave> };
  holder[pendingKey] ??= new Map();
  return holder[pendingKey];
}

function sweep(pending: Map<string, PendingSave>, now: number): void {
  for (const [key, entry] of pending) if (now - entry.startedAt > pendingTtlMs) pending.delete(key);
}

/** Turns the plugin acts on: a person's own run, not a reflection, cron or heartbeat. */
function isPersonsTurn(ctx: AgentHookContext): boolean {
  return !isReflectionSession(ctx.sessionKey) && ctx.trigger !== "cron" && ctx.trigger !== "heartbeat";
}

/**
 * Store the save within the run's wait: Cortex's answer, else (timeout, Cortex down, 5xx, its credential refused)
 * the durable queue; a refusal of the save itself (4xx) is final and said so.
 */
async function save(
  deps: ExplicitSaveDeps,
  body: ExplicitSaveBody,
  key: string,
  timeoutMs: number,
): Promise<SaveOutcome> {
  const result = await deps.client.remember(body, Math.max(50, timeoutMs));
  if (result.ok) return { kind: "saved", answer: result.value };
  if (isRejection(result.failure)) return { kind: "rejected", message: describeFailure(result.failure) };
  const queued = deps.saveQueue().enqueue(key, body, new Date());
  logEvent(deps.logger, "warn", "explicit_save_queued", { key, message: describeFailure(result.failure) });
  if (queued.status === "dropped_full") return { kind: "dropped" };
  if (queued.status === "queued" && queued.evicted.length > 0)
    increment(deps.counters.queueDrops, "explicit_save_full_dropped_oldest", queued.evicted.length);
  return { kind: "queued" };
}

function startSave(
  deps: ExplicitSaveDeps,
  ctx: AgentHookContext,
  principal: Principal,
  directive: ExplicitSaveDirective,
  statement: string | undefined,
  startedAt: number,
): PendingSave {
  const householdUnavailable = directive.scope === "household" && principal.householdId === undefined;
  if (statement === undefined || statement === "") {
    return {
      startedAt,
      directive,
      statement: "",
      householdUnavailable,
      outcome: Promise.resolve({ kind: "nothing_to_save" }),
    };
  }
  const body = saveRequestFor({
    principal,
    directive,
    statement,
    sessionKey: ctx.sessionKey,
    runId: ctx.runId,
    channel: ctx.channel,
    now: new Date(startedAt),
  });
  const key = `explicit-save\u0000${ctx.sessionKey ?? "-"}\u0000${ctx.runId ?? startedAt}\u0000${statement}`;
  const outcome = save(deps, body, key, deps.config.explicitSave.waitMs).catch(
    (error: unknown): SaveOutcome => ({ kind: "rejected", message: errorMessage(error) }),
  );
  return { startedAt, directive, statement, householdUnavailable, outcome };
}

/** before_model_resolve: start a save whose statement is in the message itself. Returns at once. */
export function explicitSaveStartHook(deps: ExplicitSaveDeps): HookHandlers["before_model_resolve"] {
  const now = deps.now ?? Date.now;
  return (event, ctx) => {
    try {
      if (!deps.config.explicitSave.enabled || !isPersonsTurn(ctx)) return undefined;
      const key = runKey(ctx);
      if (key === undefined) return undefined;
      const directive = detectExplicitSave(event.prompt);
      // "save this" needs the transcript, which only before_prompt_build has.
      if (directive === undefined || directive.refersBack) return undefined;
      const principal = deps.principalOf(ctx);
      if (!principal.ok) return undefined;
      const pending = pendingSaves();
      sweep(pending, now());
      pending.set(key, startSave(deps, ctx, principal.principal, directive, directive.statement, now()));
    } catch (error) {
      increment(deps.counters.hookErrors, "before_model_resolve");
      logEvent(deps.logger, "error", "hook_failed", {
        hook: "before_model_resolve",
        message: errorMessage(error),
      });
    }
    return undefined;
  };
}

/**
 * before_prompt_build: await the run's save (or start it: a save that refers back to the previous message, or a run
 * whose first hook did not see it) and tell the model what happened, in the system context.
 */
export function explicitSaveReplyHook(deps: ExplicitSaveDeps): HookHandlers["before_prompt_build"] {
  const now = deps.now ?? Date.now;
  return async (event, ctx) => {
    try {
      if (!deps.config.explicitSave.enabled || !isPersonsTurn(ctx)) return undefined;
      const principal = deps.principalOf(ctx);
      if (!principal.ok) return undefined;
      const key = runKey(ctx);
      const pending = pendingSaves();
      let entry = key === undefined ? undefined : pending.get(key);
      if (key !== undefined) pending.delete(key);
      if (entry === undefined) {
        const message = event.currentUserMessage ?? event.prompt;
        const directive = detectExplicitSave(message);
        if (directive === undefined) return undefined;
        const statement = directive.refersBack
          ? previousUserText(event.messages, message)
          : directive.statement;
        entry = startSave(deps, ctx, principal.principal, directive, statement, now());
      }
      const awaitedAt = now();
      const outcome = await entry.outcome;
      increment(deps.counters.explicitSaves, outcome.kind);
      const text = renderSaveContext({
        directive: entry.directive,
        statement: entry.statement,
        outcome,
        householdUnavailable: entry.householdUnavailable,
        approval: deps.config.explicitSave.approval,
      });
      // Stored already: the turn's reflection and later captures must not bring it to Cortex a second time.
      rememberInjection(deps.injected, principal.principal, {
        text,
        itemTexts: outcome.kind === "saved" || outcome.kind === "queued" ? [entry.statement] : [],
      });
      logEvent(deps.logger, "info", "explicit_save", {
        sessionKey: ctx.sessionKey,
        outcome: outcome.kind,
        // How long this hook held the run up, and how long the save took from its start in before_model_resolve.
        blockedMs: now() - awaitedAt,
        sinceStartMs: now() - entry.startedAt,
        ...(outcome.kind === "saved"
          ? { id: outcome.answer.id, status: outcome.answer.status, proposal: outcome.answer.proposal.status }
          : {}),
      });
      return { appendSystemContext: text };
    } catch (error) {
      increment(deps.counters.hookErrors, "before_prompt_build");
      logEvent(deps.logger, "error", "hook_failed", {
        hook: "before_prompt_build",
        message: errorMessage(error),
      });
      return undefined;
    }
  };
}
