import { createServer, type Server } from "node:http";
import { callerRefusedError } from "@remram/contract";
import type { PluginConfig } from "./config.js";
import {
  type CortexClient,
  type CortexFailure,
  type CortexResult,
  describeFailure,
} from "./cortex-client.js";
import type { DurableQueue, QueuedEntry } from "./durable-queue.js";
import { injectedFor, isInjectedStatement } from "./injected-content.js";
import { errorMessage, logEvent } from "./log.js";
import { increment, renderPrometheus } from "./metrics.js";
import type { HostLogger, HostPluginApi } from "./openclaw-api.js";
import { reflectionSessionKey } from "./principal.js";
import { backoffDelayMs } from "./queue-policy.js";
import type { Queues } from "./queues.js";
import { lastAssistantText, reflectionInstructions, reflectionMessage } from "./reflection.js";
import { reflectionReplyAction } from "./reflection-reply.js";
import type { ServiceHandles, SharedState } from "./shared-state.js";
import { queueStaleTranscripts, type TranscriptDeps } from "./transcript-hooks.js";

/**
 * The plugin service: delivers the capture queue to /ingest and the reflect queue to /reflect, runs queued
 * reflection jobs as background subagent runs, and serves /metrics. It runs on the "full" plugin instance,
 * whose runtime may start subagent runs (from inside agent_end they are refused; research note §3).
 */

/**
 * A 4xx other than auth and throttling is about the items themselves: sending them again cannot help. A 403 is
 * about the items too (another household, a scope the person may not write) unless Cortex refused the credential
 * itself, which is configuration: those items wait for it to be fixed.
 */
export function isRejection(failure: CortexFailure): boolean {
  if (failure.kind !== "http" || failure.status < 400 || failure.status >= 500) return false;
  if (failure.status === 403) return !failure.body.includes(callerRefusedError);
  return ![401, 408, 429].includes(failure.status);
}

interface Drainer {
  tick(): Promise<void>;
}

/**
 * Deliver a durable queue head-first in batches. Success removes the batch; a rejected batch is retried item
 * by item so one bad item is dropped (counted, logged) without losing the rest; anything else (Cortex down,
 * slow, 5xx) keeps the items and backs off exponentially.
 */
function queueDrainer<T>(params: {
  name: string;
  queue: DurableQueue<T>;
  batchSize: number;
  send: (payloads: T[]) => Promise<CortexResult<unknown>>;
  onDelivered: (count: number) => void;
  onFailure: () => void;
  state: SharedState;
  config: PluginConfig["queue"];
  logger: HostLogger;
}): Drainer {
  const { name, queue, state, logger } = params;
  let failures = 0;
  let nextAttemptAt = 0;
  let busy = false;
  const drop = (entry: QueuedEntry<T>, failure: CortexFailure) => {
    queue.remove(entry);
    increment(state.counters.queueDrops, `${name}_rejected`);
    logEvent(logger, "warn", "queue_drop", {
      queue: name,
      reason: "rejected",
      key: entry.key,
      message: describeFailure(failure),
    });
  };
  return {
    async tick() {
      if (busy || Date.now() < nextAttemptAt) return;
      busy = true;
      try {
        const entries = queue.peek(params.batchSize, (file) => {
          increment(state.counters.queueDrops, `${name}_corrupt`);
          logEvent(logger, "warn", "queue_drop", { queue: name, reason: "corrupt", file });
        });
        if (entries.length === 0) return;
        const result = await params.send(entries.map((entry) => entry.payload));
        if (result.ok) {
          for (const entry of entries) queue.remove(entry);
          params.onDelivered(entries.length);
          if (failures > 0)
            logEvent(logger, "info", "delivery_recovered", { queue: name, afterFailures: failures });
          failures = 0;
          return;
        }
        if (isRejection(result.failure)) {
          for (const entry of entries) {
            const single = entries.length === 1 ? result : await params.send([entry.payload]);
            if (single.ok) {
              queue.remove(entry);
              params.onDelivered(1);
            } else if (isRejection(single.failure)) drop(entry, single.failure);
            else break;
          }
          return;
        }
        failures += 1;
        params.onFailure();
        const delay = backoffDelayMs(failures, params.config.backoffInitialMs, params.config.backoffMaxMs);
        nextAttemptAt = Date.now() + delay;
        logEvent(logger, "warn", "delivery_failed", {
          queue: name,
          message: describeFailure(result.failure),
          consecutiveFailures: failures,
          retryInMs: delay,
          depth: queue.depth,
        });
      } catch (error) {
        logEvent(logger, "error", "delivery_crashed", { queue: name, message: errorMessage(error) });
      } finally {
        busy = false;
      }
    },
  };
}

/**
 * Run the oldest reflection job: a background subagent run (deliver false, its own session, no tools, the
 * minimal prompt) whose answer is validated and moved to the reflect queue. The run's failures are retried
 * up to maxAttempts; an answer that does not validate is asked for once more, then the job is dropped
 * (reflection-reply.ts), counted and logged, and nothing of it is queued.
 */
function reflectionRunner(params: {
  api: HostPluginApi;
  queues: Queues;
  state: SharedState;
  config: PluginConfig;
  logger: HostLogger;
}): Drainer {
  const { api, queues, state, config, logger } = params;
  const counters = state.counters;
  let failures = 0;
  let nextAttemptAt = 0;
  let busy = false;
  return {
    async tick() {
      if (busy || Date.now() < nextAttemptAt) return;
      const [entry] = queues.reflection.peek(1, () => increment(counters.queueDrops, "reflection_corrupt"));
      if (entry === undefined) return;
      busy = true;
      const job = entry.payload;
      // Failed runs and malformed replies both start another attempt.
      const attempt =
        (state.reflectionAttempts.get(job.jobId) ?? 0) +
        (state.reflectionInvalidReplies.get(job.jobId) ?? 0) +
        1;
      // A session per attempt: a retry in the first attempt's session would read that attempt's prompt again.
      const sessionKey = reflectionSessionKey(job.principal.agentId, `${job.jobId}-${attempt}`);
      const finish = (outcome: string) => {
        queues.reflection.remove(entry);
        state.reflectionAttempts.delete(job.jobId);
        state.reflectionInvalidReplies.delete(job.jobId);
        increment(counters.reflections, outcome);
      };
      try {
        const run = await api.runtime.subagent.run({
          sessionKey,
          message: reflectionMessage(job),
          extraSystemPrompt: reflectionInstructions,
          deliver: false,
          lightContext: true,
          promptMode: "minimal",
          disableTools: true,
          ...(config.reflection.model ?? {}),
          // One key per attempt: the gateway answers a known key with that run, and after a timeout that run
          // is the aborted one, so a retry under the job's key would end at once without running at all.
          idempotencyKey: `remram-reflect-${job.jobId}-${attempt}`,
        });
        const waited = await api.runtime.subagent.waitForRun({
          runId: run.runId,
          timeoutMs: config.reflection.runTimeoutMs,
        });
        if (waited.status !== "ok")
          throw new Error(`reflection run ended ${waited.status} ${waited.error ?? ""}`.trim());
        const { messages } = await api.runtime.subagent.getSessionMessages({ sessionKey, limit: 20 });
        failures = 0;
        // Its input had the injected knowledge removed; an item that still restates it is not new knowledge.
        const shown = injectedFor(state.injected, job.principal);
        const invalidBefore = state.reflectionInvalidReplies.get(job.jobId) ?? 0;
        const next = reflectionReplyAction({
          reply: lastAssistantText(messages) ?? "",
          job,
          invalidBefore,
          isInjected: (statement) => isInjectedStatement(statement, shown),
        });
        if (next.action !== "queue") {
          if (next.action === "retry") {
            // Asked again in a fresh run on the next tick; the job stays at the head of its queue.
            state.reflectionInvalidReplies.set(job.jobId, invalidBefore + 1);
            increment(counters.reflections, "invalid_retried");
          } else finish("invalid_delta");
          logEvent(logger, "warn", "reflection_invalid", {
            jobId: job.jobId,
            retry: next.action === "retry",
            message: next.error,
          });
          return;
        }
        const injected = next.parts.dropped_injected ?? 0;
        if (injected > 0) increment(counters.injectedStripped, "reflection_delta", injected);
        for (const [part, count] of Object.entries(next.parts))
          increment(counters.reflectionDeltaParts, part, count);
        const queued = queues.reflect.enqueue(job.jobId, next.request, new Date());
        if (queued.status === "dropped_full") increment(counters.queueDrops, "reflect_full_dropped_newest");
        if (queued.status === "queued" && queued.evicted.length > 0) {
          increment(counters.queueDrops, "reflect_full_dropped_oldest", queued.evicted.length);
        }
        finish("extracted");
        logEvent(logger, "info", "reflection_extracted", { jobId: job.jobId, parts: next.parts });
      } catch (error) {
        const attempts = (state.reflectionAttempts.get(job.jobId) ?? 0) + 1;
        state.reflectionAttempts.set(job.jobId, attempts);
        failures += 1;
        nextAttemptAt =
          Date.now() + backoffDelayMs(failures, config.queue.backoffInitialMs, config.queue.backoffMaxMs);
        if (attempts >= config.reflection.maxAttempts) {
          finish("gave_up");
          increment(counters.queueDrops, "reflection_gave_up");
        }
        logEvent(logger, "warn", "reflection_failed", {
          jobId: job.jobId,
          attempts,
          message: errorMessage(error),
        });
      } finally {
        busy = false;
        await api.runtime.subagent
          .deleteSession({ sessionKey, deleteTranscript: true })
          .catch(() => undefined);
      }
    },
  };
}

function serveMetrics(
  config: PluginConfig["metrics"],
  state: SharedState,
  queues: Queues,
  logger: HostLogger,
): Server {
  const server = createServer((request, response) => {
    if (request.method === "GET" && request.url?.split("?")[0] === "/metrics") {
      const body = renderPrometheus(state.counters, {
        captureQueueDepth: queues.capture.depth,
        reflectionQueueDepth: queues.reflection.depth,
        reflectQueueDepth: queues.reflect.depth,
        explicitSaveQueueDepth: queues.explicitSave.depth,
        transcriptQueueDepth: queues.transcript.depth,
      });
      response.writeHead(200, { "content-type": "text/plain; version=0.0.4; charset=utf-8" }).end(body);
      return;
    }
    response.writeHead(404).end();
  });
  server.on("error", (error) =>
    logEvent(logger, "error", "metrics_listen_failed", { message: errorMessage(error) }),
  );
  server.listen(config.port, config.host, () => {
    const address = server.address();
    const port = typeof address === "object" && address !== null ? address.port : config.port;
    logEvent(logger, "info", "metrics_listening", { url: `http://${config.host}:${port}/metrics` });
  });
  server.unref();
  return server;
}

export function startBackgroundWork(params: {
  api: HostPluginApi;
  logger: HostLogger;
  config: PluginConfig;
  client: CortexClient;
  state: SharedState;
  queues: Queues;
  /** The transcript hooks' state, for sessions that never ended (transcript-hooks.ts). */
  transcripts?: TranscriptDeps;
}): ServiceHandles {
  const { api, logger, config, client, state, queues } = params;
  const counters = state.counters;
  const ingest = queueDrainer({
    name: "capture",
    queue: queues.capture,
    batchSize: config.queue.batchSize,
    send: (events) => client.ingest(events),
    onDelivered: (count) => {
      counters.ingested += count;
    },
    onFailure: () => {
      counters.ingestFailures += 1;
    },
    state,
    config: config.queue,
    logger,
  });
  const reflect = queueDrainer({
    name: "reflect",
    queue: queues.reflect,
    batchSize: 1,
    send: async ([request]) =>
      request === undefined ? { ok: true, value: undefined } : client.reflect(request),
    onDelivered: (count) => increment(counters.reflections, "stored", count),
    onFailure: () => increment(counters.reflections, "delivery_failed"),
    state,
    config: config.queue,
    logger,
  });
  const reflection = config.reflection.enabled
    ? reflectionRunner({ api, queues, state, config, logger })
    : undefined;
  // Saves Cortex did not store within their run's wait (explicit-save-hook.ts); a retry of the same turn is a no-op.
  const explicitSaves = queueDrainer({
    name: "explicit_save",
    queue: queues.explicitSave,
    batchSize: 1,
    send: async ([body]) =>
      body === undefined
        ? { ok: true, value: undefined }
        : client.remember(body, config.explicitSave.deliveryTimeoutMs),
    onDelivered: (count) => increment(counters.explicitSaves, "delivered", count),
    onFailure: () => increment(counters.explicitSaves, "delivery_failed"),
    state,
    config: config.queue,
    logger,
  });
  // Finished sessions' transcripts (transcript-hooks.ts), one part per call: Cortex embeds each part's chunks.
  const transcripts = queueDrainer({
    name: "transcript",
    queue: queues.transcript,
    batchSize: 1,
    send: async ([body]) =>
      body === undefined
        ? { ok: true, value: undefined }
        : client.archiveTranscript(body, config.archive.timeoutMs),
    onDelivered: (count) => increment(counters.transcripts, "archived", count),
    onFailure: () => increment(counters.transcripts, "delivery_failed"),
    state,
    config: config.queue,
    logger,
  });
  if (params.transcripts !== undefined) {
    try {
      const sealed = queueStaleTranscripts(params.transcripts, new Date());
      if (sealed > 0) logEvent(logger, "info", "stale_transcripts_queued", { parts: sealed });
    } catch (error) {
      logEvent(logger, "error", "stale_transcripts_failed", { message: errorMessage(error) });
    }
  }
  const timers = [
    ingest,
    reflect,
    explicitSaves,
    transcripts,
    ...(reflection === undefined ? [] : [reflection]),
  ].map((drainer) => {
    const timer = setInterval(() => void drainer.tick(), config.queue.drainIntervalMs);
    timer.unref();
    return timer;
  });
  const server =
    config.metrics.mode === "http" ? serveMetrics(config.metrics, state, queues, logger) : undefined;
  logEvent(logger, "info", "service_started", {
    cortex: config.cortex.url,
    captureQueueDepth: queues.capture.depth,
    reflectionQueueDepth: queues.reflection.depth,
    reflectQueueDepth: queues.reflect.depth,
    explicitSaveQueueDepth: queues.explicitSave.depth,
  });
  return {
    stop: async () => {
      for (const timer of timers) clearInterval(timer);
      if (server !== undefined) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
