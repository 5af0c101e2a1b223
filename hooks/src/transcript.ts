import { createHash } from "node:crypto";
import type { PrivacyLevel, TranscriptArchiveRequestInput, transcriptEndReasons } from "@remram/contract";
import { memoryToolNames } from "@remram/contract";
import { z } from "zod";
import type { Principal } from "./principal.js";

/**
 * A session's transcript as the plugin keeps it until the session ends, and as it sends it to Cortex's archive
 * (seed 004). Pure: OpenClaw's messages come in as data. The plugin never reads the gateway's session files; it
 * keeps what the hooks saw (agent_end, before_compaction, before_reset), merged by each message's identity so a
 * message seen in several snapshots is kept once, in the order first seen. A message repeated word for word after
 * a compaction can be taken for its earlier twin and left out: the price of not trusting timestamps.
 */

export const TranscriptMessageSchema = z.strictObject({
  /**
   * Identity across snapshots: role and content hash, and which occurrence of that in the snapshot (a snapshot
   * holds the session from its start, or after a compaction its tail, which before_compaction staged already).
   */
  key: z.string().min(1).max(200),
  role: z.enum(["user", "assistant", "system", "tool"]),
  content: z.string(),
  at: z.string().optional(),
  attachments: z
    .array(z.strictObject({ mediaType: z.string().min(1).max(128), digest: z.string() }))
    .max(20)
    .optional(),
});
export type TranscriptMessage = z.infer<typeof TranscriptMessageSchema>;

export type TranscriptEndReason = (typeof transcriptEndReasons)[number];

/** The contract's bound on one message's text. */
export const maxMessageChars = 200_000;
const cutMark = " …[cut]";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function sha256(text: string | Uint8Array): string {
  return createHash("sha256").update(text).digest("hex");
}

function isoTime(value: unknown): string | undefined {
  const ms = typeof value === "number" ? value : typeof value === "string" ? Date.parse(value) : Number.NaN;
  return Number.isFinite(ms) ? new Date(ms).toISOString() : undefined;
}

interface Blocks {
  text: string;
  attachments: { mediaType: string; digest: string }[];
}

/** Text blocks joined; images become attachments by digest (the archive keeps references, not blobs). */
function blocks(content: unknown, toolCalls: boolean): Blocks {
  if (typeof content === "string") return { text: content, attachments: [] };
  const parts: string[] = [];
  const attachments: Blocks["attachments"] = [];
  for (const block of Array.isArray(content) ? content : []) {
    if (!isRecord(block)) continue;
    if (block.type === "text" && typeof block.text === "string") parts.push(block.text);
    else if (block.type === "image" && typeof block.data === "string") {
      const mediaType =
        typeof block.mimeType === "string" && block.mimeType !== "" ? block.mimeType : "image";
      attachments.push({
        mediaType: mediaType.slice(0, 128),
        digest: `sha256:${sha256(Buffer.from(block.data, "base64"))}`,
      });
      parts.push(`[image ${mediaType}]`);
    } else if (toolCalls && block.type === "toolCall" && typeof block.name === "string") {
      let args = "";
      try {
        args = JSON.stringify(block.arguments ?? {}).slice(0, 2_000);
      } catch {
        args = "{}";
      }
      parts.push(`[tool call ${block.name} ${args}]`);
    }
    // Thinking blocks are the model's scratchpad, never shown to the person: not part of the conversation.
  }
  return { text: parts.join("\n"), attachments };
}

interface Raw {
  role: TranscriptMessage["role"];
  text: string;
  timestamp: unknown;
  attachments: Blocks["attachments"];
  /** Recalled memory: kept as a marker only, so a recall is never archived as new conversation. */
  recalled?: string;
}

function rawMessage(message: Record<string, unknown>): Raw | undefined {
  const timestamp = message.timestamp;
  switch (message.role) {
    case "user": {
      // A carrier of runtime context the gateway injected is not something the person said.
      if (message.runtimeContextCarrier === true) return undefined;
      const { text, attachments } = blocks(message.content, false);
      return { role: "user", text, timestamp, attachments };
    }
    case "assistant": {
      const { text, attachments } = blocks(message.content, true);
      return { role: "assistant", text, timestamp, attachments };
    }
    case "toolResult": {
      const tool = typeof message.toolName === "string" ? message.toolName : "tool";
      const { text, attachments } = blocks(message.content, false);
      const label = `${tool}${message.isError === true ? " (error)" : ""}`;
      return {
        role: "tool",
        text: `${label}: ${text}`,
        timestamp,
        attachments,
        ...(memoryToolNames.includes(tool) ? { recalled: `[${tool} result: recalled memory]` } : {}),
      };
    }
    case "bashExecution":
      return {
        role: "tool",
        text: `$ ${String(message.command ?? "")}\n${String(message.output ?? "")}`,
        timestamp,
        attachments: [],
      };
    case "compactionSummary":
    case "branchSummary": {
      const kind = message.role === "compactionSummary" ? "compaction" : "branch";
      return {
        role: "system",
        text: `[${kind} summary] ${String(message.summary ?? "")}`,
        timestamp,
        attachments: [],
      };
    }
    default:
      return undefined;
  }
}

/**
 * OpenClaw's messages (AgentMessage: user, assistant, toolResult, bashExecution, summaries) as transcript messages:
 * `strip` removes what the plugin injected from every text, a message left empty is dropped, a message longer than
 * the contract allows is cut. The key is taken before stripping, so the same message keys the same in every
 * snapshot whatever was injected meanwhile.
 */
export function transcriptMessages(
  messages: readonly unknown[],
  strip: (text: string) => string = (text) => text,
): TranscriptMessage[] {
  const seen = new Map<string, number>();
  const result: TranscriptMessage[] = [];
  for (const message of messages) {
    if (!isRecord(message)) continue;
    const raw = rawMessage(message);
    if (raw === undefined) continue;
    // Not the timestamp: the stored copy of a user message carries its arrival time, the run's copy a later one.
    const identity = `${raw.role}:${sha256(raw.text).slice(0, 32)}`;
    const occurrence = (seen.get(identity) ?? 0) + 1;
    seen.set(identity, occurrence);
    const stripped = raw.recalled ?? strip(raw.text).trim();
    if (stripped === "" && raw.attachments.length === 0) continue;
    const content =
      stripped.length > maxMessageChars
        ? stripped.slice(0, maxMessageChars - cutMark.length) + cutMark
        : stripped;
    const at = isoTime(raw.timestamp);
    result.push({
      key: `${identity}#${occurrence}`,
      role: raw.role,
      content,
      ...(at === undefined ? {} : { at }),
      ...(raw.attachments.length === 0 ? {} : { attachments: raw.attachments.slice(0, 20) }),
    });
  }
  return result;
}

/** The staged transcript with a new snapshot's unseen messages appended, in the snapshot's order. */
export function mergeTranscript(
  staged: readonly TranscriptMessage[],
  snapshot: readonly TranscriptMessage[],
): TranscriptMessage[] {
  const known = new Set(staged.map((message) => message.key));
  return [...staged, ...snapshot.filter((message) => !known.has(message.key))];
}

export interface PartLimits {
  maxMessages: number;
  maxChars: number;
}

/** Consecutive parts within both limits; a message longer than maxChars goes alone. */
export function transcriptParts(
  messages: readonly TranscriptMessage[],
  limits: PartLimits,
): TranscriptMessage[][] {
  const parts: TranscriptMessage[][] = [];
  let current: TranscriptMessage[] = [];
  let chars = 0;
  for (const message of messages) {
    const full =
      current.length >= limits.maxMessages ||
      (current.length > 0 && chars + message.content.length > limits.maxChars);
    if (full) {
      parts.push(current);
      current = [];
      chars = 0;
    }
    current.push(message);
    chars += message.content.length;
  }
  if (current.length > 0) parts.push(current);
  return parts;
}

export interface TranscriptSend {
  /** The durable queue's key: the same range of the same session is queued once. */
  key: string;
  body: TranscriptArchiveRequestInput;
}

/** The /archive/transcripts bodies of a range of a session, one per part. */
export function transcriptRequests(params: {
  principal: Principal;
  sessionId: string;
  channel: string;
  endReason: TranscriptEndReason;
  endedAt: Date;
  messages: readonly TranscriptMessage[];
  privacy: PrivacyLevel;
  allowRecall: boolean;
  limits: PartLimits;
}): TranscriptSend[] {
  const parts = transcriptParts(params.messages, params.limits);
  const sessionId =
    params.sessionId.length <= 256 ? params.sessionId : `h:${sha256(params.sessionId).slice(0, 40)}`;
  const channel = (params.channel.trim() || "unknown").slice(0, 64);
  return parts.map((part, index) => {
    const attachments = new Map<string, { name: string; mediaType: string; digest: string }>();
    for (const message of part) {
      for (const attachment of message.attachments ?? []) {
        if (attachments.size < 100 && !attachments.has(attachment.digest))
          attachments.set(attachment.digest, { name: `attachment-${attachments.size + 1}`, ...attachment });
      }
    }
    return {
      key: `transcript:${sha256([sessionId, ...part.map((message) => message.key)].join("\u0000"))}`,
      body: {
        principal: {
          userId: params.principal.userId,
          agentId: params.principal.agentId,
          ...(params.principal.householdId === undefined
            ? {}
            : { householdId: params.principal.householdId }),
        },
        sessionId,
        channel,
        endReason: params.endReason,
        endedAt: params.endedAt.toISOString(),
        part: { index, count: parts.length },
        messages: part.map((message) => ({
          role: message.role,
          content: message.content,
          ...(message.at === undefined ? {} : { at: message.at }),
        })),
        attachments: [...attachments.values()],
        privacy: params.privacy,
        allowRecall: params.allowRecall,
      },
    };
  });
}
