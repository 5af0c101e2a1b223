import { join } from "node:path";
import type { PluginConfig } from "./config.js";
import { type ToolResultEvent, ToolResultEventSchema } from "./cortex-contract.js";
import { DurableQueue } from "./durable-queue.js";
import { pluginId } from "./log.js";
import {
  type ReflectionJob,
  ReflectionJobSchema,
  type ReflectRequest,
  ReflectRequestSchema,
} from "./reflection.js";
import { type SharedState, sharedQueue } from "./shared-state.js";

/**
 * The plugin's three durable queues, under one folder:
 * capture/ (tool results for /ingest), reflection/ (jobs for a background run), reflect/ (deltas for /reflect).
 */
export interface Queues {
  capture: DurableQueue<ToolResultEvent>;
  reflection: DurableQueue<ReflectionJob>;
  reflect: DurableQueue<ReflectRequest>;
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
  };
}
