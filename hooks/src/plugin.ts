import { createHash, randomUUID } from "node:crypto";
import { createServer, type Server } from "node:http";
import { join } from "node:path";
import { captureToolResult } from "./capture.js";
import { type PluginConfig, parsePluginConfig } from "./config.js";
import { type CortexClient, createCortexClient, describeFailure } from "./cortex-client.js";
import {
  cortexLimits,
  RetrieveResponseSchema,
  type ToolResultEvent,
  ToolResultEventSchema,
} from "./cortex-contract.js";
import { DurableQueue } from "./durable-queue.js";
import { decideEscalation, type EscalationDecision, modelOverrideFor } from "./escalation.js";
import { blocksCloud, filterForModel, renderKnowledgeBlock } from "./injection.js";
import { builtInMemoryConflicts } from "./memory-guard.js";
import { increment, renderPrometheus } from "./metrics.js";
import type { AgentHookContext, HostLogger, HostPluginApi, ServiceContext } from "./openclaw-api.js";
import { derivePrincipal, isReflectionSession, type Principal, reflectionSessionKey } from "./principal.js";
import { backoffDelayMs } from "./queue-policy.js";
import {
  buildReflectionJob,
  lastAssistantText,
  parseReflectionReply,
  type ReflectionJob,
  ReflectionJobSchema,
  reflectionMessage,
  toCortexDelta,
} from "./reflection.js";
import {
  type PrefetchEntry,
  type RetrieveOutcome,
  rememberTranscriptTokens,
  type SharedState,
  sharedQueue,
  sharedState,
  sweepPrefetch,
} from "./shared-state.js";

export const pluginId = "remram-hooks";

/** Structured JSON log lines, one event each (seed 000 §6.6: orchestration logs its own decisions). */
function logEvent(logger: HostLogger, level: "info" | "warn" | "error", event: string, fields: object): void {
  logger[level](JSON.stringify({ component: pluginId, event, ...fields }));
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

interface Queues {
  capture: DurableQueue<ToolResultEvent>;
  reflection: DurableQueue<ReflectionJob>;
}

function openQueues(state: SharedState, config: PluginConfig, stateDir: string): Queues {
  const root = config.queue.path ?? join(stateDir, pluginId, "queue");
  const limits = { maxItems: config.queue.maxItems, dropPolicy: config.queue.dropPolicy };
  const captureDir = join(root, "capture");
  const reflectionDir = join(root, "reflection");
  return {
    capture: sharedQueue(
      state,
      captureDir,
      () =>
        new DurableQueue(captureDir, limits, (payload) => {
          const parsed = ToolResultEventSchema.safeParse(payload);
          return parsed.success ? parsed.data : undefined;
        }),
    ),
    reflection: sharedQueue(
      state,
      reflectionDir,
      () =>
        new DurableQueue(reflectionDir, limits, (payload) => {
          const parsed = ReflectionJobSchema.safeParse(payload);
          return parsed.success ? parsed.data : undefined;
        }),
    ),
  };
}

function runKey(ctx: AgentHookContext): string | undefined {
  return ctx.runId ?? ctx.sessionKey;
}

async function retrieveFor(
  client: CortexClient,
  config: PluginConfig,
  principal: Principal,
  requestText: string,
): Promise<RetrieveOutcome> {
  // Nothing to search for (an attachment-only turn): an empty bundle, without a round trip.
  if (requestText.trim() === "") return { status: "ok", bundle: RetrieveResponseSchema.parse({}) };
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
      // Reflection runs read a user's turn: they never leave the box.
      if (isReflectionSession(ctx.sessionKey)) {
        return modelOverrideFor({ target: "local", reason: "default_local", detail: {} }, config.escalation);
      }
      const now = Date.now();
      sweepPrefetch(state, now);
      const key = runKey(ctx);
      const principal = principalOf(ctx);
      const entry: PrefetchEntry | undefined =
        key !== undefined && principal.ok && config.injection.enabled
          ? { startedAt: now, outcome: retrieveFor(client, config, principal.principal, event.prompt) }
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
        retrieveFor(client, config, principal.principal, event.currentUserMessage ?? event.prompt));
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
      state.service = startBackgroundWork(api, ctx, config, client, state, getQueues());
    },
    stop: async () => {
      await state.service?.stop();
      state.service = undefined;
    },
  });
}

/**
 * The service side: drains the capture queue to /ingest, runs reflection jobs as background subagent runs,
 * and serves /metrics. Runs on the "full" plugin instance, the one whose runtime may start subagent runs
 * (from inside agent_end they are refused; research note §3).
 */
function startBackgroundWork(
  api: HostPluginApi,
  ctx: ServiceContext,
  config: PluginConfig,
  client: CortexClient,
  state: SharedState,
  queues: Queues,
) {
  const counters = state.counters;
  const logger = ctx.logger;
  let captureFailures = 0;
  let captureNextAt = 0;
  let reflectionFailures = 0;
  let reflectionNextAt = 0;
  let draining = false;
  let reflecting = false;
  let stopped = false;

  const drainCapture = async (): Promise<void> => {
    if (draining || stopped || Date.now() < captureNextAt) return;
    draining = true;
    try {
      const entries = queues.capture.peek(config.queue.batchSize, (name) => {
        increment(counters.queueDrops, "capture_corrupt");
        logEvent(logger, "warn", "queue_drop", { queue: "capture", reason: "corrupt", file: name });
      });
      if (entries.length === 0) return;
      const result = await client.ingest(entries.map((entry) => entry.payload));
      if (result.ok) {
        for (const entry of entries) queues.capture.remove(entry);
        counters.ingested += entries.length;
        if (captureFailures > 0)
          logEvent(logger, "info", "ingest_recovered", { afterFailures: captureFailures });
        captureFailures = 0;
        return;
      }
      const failure = result.failure;
      // A 4xx other than auth/throttling is about the items themselves: retrying cannot help.
      const rejected =
        failure.kind === "http" &&
        failure.status >= 400 &&
        failure.status < 500 &&
        ![401, 403, 408, 429].includes(failure.status);
      if (rejected && entries.length === 1) {
        const [entry] = entries;
        if (entry !== undefined) queues.capture.remove(entry);
        increment(counters.queueDrops, "capture_rejected");
        logEvent(logger, "warn", "queue_drop", {
          queue: "capture",
          reason: "rejected",
          key: entry?.key,
          message: describeFailure(failure),
        });
        return;
      }
      if (rejected) {
        // Find the bad item: send one at a time on the next passes.
        for (const entry of entries) {
          const single = await client.ingest([entry.payload]);
          if (single.ok) {
            queues.capture.remove(entry);
            counters.ingested += 1;
          } else if (
            single.failure.kind === "http" &&
            single.failure.status >= 400 &&
            single.failure.status < 500
          ) {
            queues.capture.remove(entry);
            increment(counters.queueDrops, "capture_rejected");
            logEvent(logger, "warn", "queue_drop", {
              queue: "capture",
              reason: "rejected",
              key: entry.key,
              message: describeFailure(single.failure),
            });
          } else break;
        }
        return;
      }
      captureFailures += 1;
      counters.ingestFailures += 1;
      const delay = backoffDelayMs(captureFailures, config.queue.backoffInitialMs, config.queue.backoffMaxMs);
      captureNextAt = Date.now() + delay;
      logEvent(logger, "warn", "ingest_failed", {
        message: describeFailure(failure),
        consecutiveFailures: captureFailures,
        retryInMs: delay,
        depth: queues.capture.depth,
      });
    } catch (error) {
      logEvent(logger, "error", "ingest_drain_failed", { message: errorMessage(error) });
    } finally {
      draining = false;
    }
  };

  const finishReflection = (job: ReflectionJob, outcome: string, entry: { name: string; key: string }) => {
    queues.reflection.remove(entry);
    state.reflectionAttempts.delete(job.jobId);
    increment(counters.reflections, outcome);
  };

  const runReflection = async (): Promise<void> => {
    if (reflecting || stopped || Date.now() < reflectionNextAt) return;
    const [entry] = queues.reflection.peek(1, () => increment(counters.queueDrops, "reflection_corrupt"));
    if (entry === undefined) return;
    reflecting = true;
    const job = entry.payload;
    const sessionKey = reflectionSessionKey(job.principal.agentId, job.jobId);
    try {
      const run = await api.runtime.subagent.run({
        sessionKey,
        message: reflectionMessage(job),
        deliver: false,
        lightContext: true,
        disableTools: true,
        idempotencyKey: `remram-reflect-${job.jobId}`,
      });
      const waited = await api.runtime.subagent.waitForRun({
        runId: run.runId,
        timeoutMs: config.reflection.runTimeoutMs,
      });
      if (waited.status !== "ok")
        throw new Error(`reflection run ended with ${waited.status}: ${waited.error ?? ""}`);
      const { messages } = await api.runtime.subagent.getSessionMessages({ sessionKey, limit: 20 });
      const parsed = parseReflectionReply(lastAssistantText(messages) ?? "");
      if (!parsed.ok) {
        // The model's answer will not get better by asking Cortex again: log it and move on.
        finishReflection(job, "invalid_delta", entry);
        logEvent(logger, "warn", "reflection_invalid", { jobId: job.jobId, message: parsed.error });
        return;
      }
      const stored = await client.reflect({
        principal: job.principal,
        delta: toCortexDelta(parsed.delta, job),
      });
      if (!stored.ok) throw new Error(`/reflect failed: ${describeFailure(stored.failure)}`);
      finishReflection(job, "stored", entry);
      reflectionFailures = 0;
      logEvent(logger, "info", "reflection_stored", { jobId: job.jobId, items: parsed.delta.items.length });
    } catch (error) {
      const attempts = (state.reflectionAttempts.get(job.jobId) ?? 0) + 1;
      state.reflectionAttempts.set(job.jobId, attempts);
      reflectionFailures += 1;
      reflectionNextAt =
        Date.now() +
        backoffDelayMs(reflectionFailures, config.queue.backoffInitialMs, config.queue.backoffMaxMs);
      if (attempts >= config.reflection.maxAttempts) {
        finishReflection(job, "gave_up", entry);
        increment(counters.queueDrops, "reflection_gave_up");
      }
      logEvent(logger, "warn", "reflection_failed", {
        jobId: job.jobId,
        attempts,
        message: errorMessage(error),
      });
    } finally {
      reflecting = false;
      await api.runtime.subagent.deleteSession({ sessionKey, deleteTranscript: true }).catch(() => undefined);
    }
  };

  const captureTimer = setInterval(() => void drainCapture(), config.queue.drainIntervalMs);
  const reflectionTimer = setInterval(() => void runReflection(), config.queue.drainIntervalMs);
  captureTimer.unref();
  reflectionTimer.unref();

  let server: Server | undefined;
  if (config.metrics.mode === "http") {
    server = createServer((request, response) => {
      if (request.method === "GET" && request.url?.split("?")[0] === "/metrics") {
        const body = renderPrometheus(counters, {
          captureQueueDepth: queues.capture.depth,
          reflectionQueueDepth: queues.reflection.depth,
        });
        response.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(body);
        return;
      }
      response.writeHead(404).end();
    });
    server.on("error", (error) =>
      logEvent(logger, "error", "metrics_listen_failed", { message: errorMessage(error) }),
    );
    server.listen(config.metrics.port, config.metrics.host, () => {
      const address = server?.address();
      logEvent(logger, "info", "metrics_listening", {
        url:
          typeof address === "object" && address !== null
            ? `http://${config.metrics.host}:${address.port}/metrics`
            : undefined,
      });
    });
    server.unref();
  }
  logEvent(logger, "info", "service_started", {
    captureQueueDepth: queues.capture.depth,
    reflectionQueueDepth: queues.reflection.depth,
    cortex: config.cortex.url,
  });

  return {
    stop: async () => {
      stopped = true;
      clearInterval(captureTimer);
      clearInterval(reflectionTimer);
      const closing = server;
      server = undefined;
      if (closing !== undefined) await new Promise<void>((resolve) => closing.close(() => resolve()));
    },
  };
}
