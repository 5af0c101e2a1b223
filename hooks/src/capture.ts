import { createHash } from "node:crypto";
import { ingestLimits, memoryToolNames } from "@remram/contract";
import type { PluginConfig } from "./config.js";
import type { ToolResultEvent } from "./cortex-contract.js";
import type { ToolResultPersistContext, ToolResultPersistEvent } from "./openclaw-api.js";
import { type Principal, toIdentifier } from "./principal.js";

/**
 * Turning a persisted tool result into the item the durable queue holds and /ingest receives (seed 000 §4.5).
 * The provenance key is what makes the whole path idempotent: the same tool call captured twice (a replayed
 * transcript, a restart between enqueue and ingest) keeps one queue file and one knowledge object.
 */

/** sha256 over the identity of one tool call: agent, session and the provider's tool-call id. */
export function toolResultProvenanceKey(parts: {
  agentId: string;
  sessionKey: string;
  toolCallId?: string;
  toolName: string;
  /** Only used when the call has no id: then the content itself identifies it. */
  fallbackContent: string;
}): string {
  const identity =
    parts.toolCallId === undefined
      ? ["tool-content", parts.agentId, parts.sessionKey, parts.toolName, parts.fallbackContent]
      : ["tool-call", parts.agentId, parts.sessionKey, parts.toolCallId];
  return `tool:${createHash("sha256").update(identity.join("\u0000")).digest("hex")}`;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** Text of a tool result's content blocks; images are named, not inlined. */
function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (!Array.isArray(content)) return "";
  return content
    .map((block) => {
      if (!isRecord(block)) return "";
      if (block.type === "text" && typeof block.text === "string") return block.text;
      if (block.type === "image")
        return `[image ${typeof block.mimeType === "string" ? block.mimeType : ""}]`.trim();
      return "";
    })
    .filter((text) => text.length > 0)
    .join("\n");
}

/** Structured details, as compact JSON, when they serialise at all; `strip` applies to every string in them. */
function detailsJson(details: unknown, strip: (text: string) => string): string | undefined {
  if (details === undefined || details === null) return undefined;
  try {
    // Strings are stripped before they are escaped: an item quoted in JSON would no longer match.
    return JSON.stringify(details, (_key, value: unknown) =>
      typeof value === "string" ? strip(value) : value,
    );
  } catch {
    return undefined;
  }
}

const unchanged = (text: string): string => text;

/** Cortex has no field for structured details: they follow the text, both within the size limit. */
function outputOf(text: string, details: string | undefined): string {
  return [text, details === undefined ? "" : `details: ${details}`]
    .filter((part) => part !== "")
    .join("\n\n");
}

export type CaptureSkipReason =
  | "disabled"
  | "synthetic"
  | "skipped_tool"
  | "not_a_tool_result"
  | "empty"
  | "injected_only"
  | "tool_error";

export type CaptureResult =
  | { ok: true; item: ToolResultEvent; truncated: boolean }
  | { ok: false; reason: CaptureSkipReason };

export function captureToolResult(
  event: ToolResultPersistEvent,
  ctx: ToolResultPersistContext,
  principal: Principal,
  sessionKey: string,
  config: PluginConfig["capture"],
  now: Date,
  /** Removes what the plugin injected (injected-content.ts) from the output before it is queued. */
  strip: (text: string) => string = unchanged,
): CaptureResult {
  if (!config.enabled) return { ok: false, reason: "disabled" };
  // Synthetic results are ones the gateway made up (e.g. for an interrupted call): no tool ran.
  if (event.isSynthetic === true) return { ok: false, reason: "synthetic" };
  const message = event.message;
  if (!isRecord(message) || message.role !== "toolResult") return { ok: false, reason: "not_a_tool_result" };
  const toolName =
    event.toolName ?? ctx.toolName ?? (typeof message.toolName === "string" ? message.toolName : "unknown");
  // Recalled memory (memory_search, memory_get) is never captured as new knowledge.
  if (config.skipTools.includes(toolName) || memoryToolNames.includes(toolName))
    return { ok: false, reason: "skipped_tool" };
  const toolCallId =
    event.toolCallId ??
    ctx.toolCallId ??
    (typeof message.toolCallId === "string" ? message.toolCallId : undefined);
  // A failed call (file not found, a refused command) tells what went wrong with the call, not about the person:
  // noise in their memory. The transcript keeps it.
  if (message.isError === true) return { ok: false, reason: "tool_error" };
  const text = contentText(message.content);
  // The key hashes the output as the tool wrote it, so it does not depend on what was injected meanwhile.
  const original = outputOf(text, detailsJson(message.details, unchanged));
  if (original.trim() === "") return { ok: false, reason: "empty" };
  const fullOutput = outputOf(strip(text), detailsJson(message.details, strip));
  if (fullOutput.trim() === "") return { ok: false, reason: "injected_only" };
  const limit = Math.min(config.maxTextChars, ingestLimits.maxTextChars);
  const truncated = fullOutput.length > limit;
  const observedAt =
    typeof message.timestamp === "number" && Number.isFinite(message.timestamp)
      ? new Date(message.timestamp).toISOString()
      : now.toISOString();
  return {
    ok: true,
    truncated,
    item: {
      kind: "tool_result",
      provenanceKey: toolResultProvenanceKey({
        agentId: principal.agentId,
        sessionKey,
        toolName,
        fallbackContent: original,
        ...(toolCallId === undefined ? {} : { toolCallId }),
      }),
      sessionId: toIdentifier(sessionKey),
      agentId: principal.agentId,
      observedAt,
      scope: "user",
      owner: {
        userId: principal.userId,
        ...(principal.householdId === undefined ? {} : { householdId: principal.householdId }),
      },
      tool: toolName.slice(0, 128),
      ...(toolCallId === undefined ? {} : { toolCallId: toolCallId.slice(0, 128) }),
      output: truncated ? fullOutput.slice(0, limit) : fullOutput,
    },
  };
}
