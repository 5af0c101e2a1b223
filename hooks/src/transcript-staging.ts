import { createHash } from "node:crypto";
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { z } from "zod";
import { TranscriptMessageSchema } from "./transcript.js";

/**
 * Each live session's transcript so far, one file per session on disk, until the session ends and it goes to the
 * transcript queue. On disk because the hooks that see messages (agent_end, on a "discovery" plugin instance) and
 * the one that seals them (session_end, on the "full" instance) share no memory, and because a session outlives a
 * gateway restart. Written whole, to a temporary file that is fsynced and renamed, so a crash leaves the old
 * version or the new one. Synchronous, like the durable queue: session_end's 2 s budget must not wait on I/O.
 */

export const StagedTranscriptSchema = z.strictObject({
  sessionId: z.string().min(1),
  sessionKey: z.string().optional(),
  principal: z.strictObject({ userId: z.string(), householdId: z.string().optional(), agentId: z.string() }),
  channel: z.string(),
  messages: z.array(TranscriptMessageSchema),
  /** Messages before this index are queued already (the session went on after a restart). */
  archivedThrough: z.int().min(0),
  updatedAt: z.string(),
});
export type StagedTranscript = z.infer<typeof StagedTranscriptSchema>;

function fileName(sessionId: string): string {
  return `${createHash("sha256").update(sessionId).digest("hex")}.json`;
}

export class TranscriptStaging {
  constructor(readonly directory: string) {}

  read(sessionId: string): StagedTranscript | undefined {
    let text: string;
    try {
      text = readFileSync(join(this.directory, fileName(sessionId)), "utf8");
    } catch {
      return undefined;
    }
    try {
      const parsed = StagedTranscriptSchema.safeParse(JSON.parse(text));
      return parsed.success && parsed.data.sessionId === sessionId ? parsed.data : undefined;
    } catch {
      return undefined;
    }
  }

  write(staged: StagedTranscript): void {
    mkdirSync(this.directory, { recursive: true });
    const target = join(this.directory, fileName(staged.sessionId));
    const temporary = `${target}.${process.pid}.tmp`;
    const fd = openSync(temporary, "w", 0o600);
    try {
      writeSync(fd, JSON.stringify(staged));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, target);
  }

  remove(sessionId: string): void {
    try {
      unlinkSync(join(this.directory, fileName(sessionId)));
    } catch {
      // Already gone.
    }
  }

  /** Every staged session. */
  all(): StagedTranscript[] {
    return this.stale(Number.NEGATIVE_INFINITY, Date.now());
  }

  /** Staged sessions not written for `olderThanMs`: their session never ended (the gateway died meanwhile). */
  stale(olderThanMs: number, now: number): StagedTranscript[] {
    let names: string[];
    try {
      names = readdirSync(this.directory).filter((name) => /^[0-9a-f]{64}\.json$/.test(name));
    } catch {
      return [];
    }
    const found: StagedTranscript[] = [];
    for (const name of names) {
      const path = join(this.directory, name);
      try {
        if (now - statSync(path).mtimeMs < olderThanMs) continue;
        const parsed = StagedTranscriptSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
        if (parsed.success) found.push(parsed.data);
        else unlinkSync(path);
      } catch {
        // Unreadable: a later pass tries again.
      }
    }
    return found;
  }
}
