import { join } from "node:path";
import { explicitSaveRequest, transcriptArchiveRequest } from "@remram/contract";
import type { PluginConfig } from "./config.js";
import { type ExplicitSaveBody, type ToolResultEvent, ToolResultEventSchema } from "./cortex-contract.js";
import { DurableQueue } from "./durable-queue.js";
import { pluginId } from "./log.js";
import type { TranscriptBody } from "./memory-tools-contract.js";
import {
  type ReflectionJob,
  ReflectionJobSchema,
  type ReflectRequest,
  ReflectRequestSchema,
} from "./reflection.js";
import { type SharedState, sharedQueue } from "./shared-state.js";

/**
 * The plugin's durable queues, under one folder: capture/ (tool results for /ingest), reflection/ (jobs for a
 * background run), reflect/ (deltas for /reflect), explicit-save/ (saves for /remember).
 */
export interface Queues {
  capture: DurableQueue<ToolResultEvent>;
  reflection: DurableQueue<ReflectionJob>;
  reflect: DurableQueue<ReflectRequest>;
  /** explicit-save/: saves Cortex did not store within the run's wait, for /remember. */
  explicitSave: DurableQueue<ExplicitSaveBody>;
  /** transcript/: finished sessions' transcripts for /archive/transcripts (transcript-hooks.ts). */
  transcript: DurableQueue<TranscriptBody>;
}

function validated<T>(schema: {
  safeParse(value: unknown): { success: true; data: T } | { success: false };
}) {
  return (payload: unknown): T | undefined => {
    const parsed = schema.safeParse(payload);
    return parsed.success ? parsed.data : undefined;
  };
}

export function queueRoot(config: PluginConfig, stateDir: string): string {
  return config.queue.path ?? join(stateDir, pluginId, "queue");
}

/** Live sessions' transcripts until they end (transcript-staging.ts), beside the queues. */
export function transcriptStagingDir(config: PluginConfig, stateDir: string): string {
  return join(queueRoot(config, stateDir), "transcript-staging");
}

export function openQueues(state: SharedState, config: PluginConfig, stateDir: string): Queues {
  const root = queueRoot(config, stateDir);
  const limits = { maxItems: config.queue.maxItems, dropPolicy: config.queue.dropPolicy };
  const open = <T>(name: string, parse: (payload: unknown) => T | undefined) => {
    const directory = join(root, name);
    return sharedQueue(state, directory, () => new DurableQueue(directory, limits, parse));
  };
  return {
    capture: open("capture", validated(ToolResultEventSchema)),
    reflection: open("reflection", validated(ReflectionJobSchema)),
    reflect: open("reflect", validated(ReflectRequestSchema)),
    explicitSave: open("explicit-save", validated(explicitSaveRequest)),
    transcript: open("transcript", validated(transcriptArchiveRequest)),
  };
}
