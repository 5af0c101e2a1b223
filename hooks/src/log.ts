import type { HostLogger } from "./openclaw-api.js";

export const pluginId = "remram-hooks";

/** Structured JSON log lines, one event each (seed 000 §6.6: orchestration logs its own decisions). */
export function logEvent(
  logger: HostLogger,
  level: "info" | "warn" | "error",
  event: string,
  fields: object,
): void {
  logger[level](JSON.stringify({ component: pluginId, event, ...fields }));
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
