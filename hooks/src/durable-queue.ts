import { createHash } from "node:crypto";
import {
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { admitToQueue, type DropPolicy } from "./queue-policy.js";

/**
 * A bounded, durable FIFO on disk: one file per item, named `<enqueued ms>-<seq>-<key hash>.json`, so a
 * directory listing sorted by name is the queue order and the key hash makes enqueue idempotent.
 * Writes go to a temporary file, are fsynced, renamed into place and the directory fsynced: an item the
 * hook accepted survives a crash or a gateway restart. Enqueue is synchronous because tool_result_persist
 * is; it costs one small write and two fsyncs.
 *
 * One gateway process owns a queue directory. Within that process all plugin instances share one
 * DurableQueue through the plugin's process-wide state, so the in-memory index matches the directory.
 */

export interface QueuedEntry<T> {
  /** File name inside the queue directory; the handle for `remove`. */
  name: string;
  key: string;
  payload: T;
}

export type EnqueueOutcome =
  | { status: "queued"; evicted: string[] }
  | { status: "duplicate" }
  | { status: "dropped_full" };

interface StoredItem<T> {
  key: string;
  enqueuedAt: string;
  payload: T;
}

const itemFile = /^(\d{13})-(\d{6})-([0-9a-f]{64})\.json$/;

function keyHash(key: string): string {
  return createHash("sha256").update(key).digest("hex");
}

function fsyncDirectory(directory: string): void {
  const fd = openSync(directory, "r");
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export class DurableQueue<T> {
  /** key hash → file name, in FIFO order (Map keeps insertion order). */
  private readonly index = new Map<string, string>();
  private sequence = 0;

  constructor(
    readonly directory: string,
    private readonly limits: { maxItems: number; dropPolicy: DropPolicy },
    /** Validates a payload read back from disk; undefined marks the file corrupt. */
    private readonly parsePayload: (payload: unknown) => T | undefined,
  ) {
    mkdirSync(directory, { recursive: true });
    const names = readdirSync(directory)
      .filter((name) => itemFile.test(name))
      .sort();
    for (const name of names) {
      const hash = itemFile.exec(name)?.[3];
      if (hash !== undefined) this.index.set(hash, name);
    }
    // Temporary files of a write that never finished are not items.
    for (const name of readdirSync(directory).filter((entry) => entry.endsWith(".tmp"))) {
      unlinkSync(join(directory, name));
    }
  }

  get depth(): number {
    return this.index.size;
  }

  has(key: string): boolean {
    return this.index.has(keyHash(key));
  }

  enqueue(key: string, payload: T, now: Date): EnqueueOutcome {
    const hash = keyHash(key);
    if (this.index.has(hash)) return { status: "duplicate" };
    const decision = admitToQueue(this.index.size, this.limits.maxItems, this.limits.dropPolicy);
    if (!decision.admit) return { status: "dropped_full" };
    const evicted: string[] = [];
    for (const [oldHash, oldName] of this.index) {
      if (evicted.length >= decision.evictOldest) break;
      const dropped = this.readEntry(oldName);
      this.deleteFile(oldName);
      this.index.delete(oldHash);
      evicted.push(dropped?.key ?? oldName);
    }
    this.sequence = (this.sequence + 1) % 1_000_000;
    const name = `${String(now.getTime()).padStart(13, "0")}-${String(this.sequence).padStart(6, "0")}-${hash}.json`;
    const stored: StoredItem<T> = { key, enqueuedAt: now.toISOString(), payload };
    const temporary = join(this.directory, `${name}.tmp`);
    const fd = openSync(temporary, "w", 0o600);
    try {
      writeSync(fd, JSON.stringify(stored));
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    renameSync(temporary, join(this.directory, name));
    fsyncDirectory(this.directory);
    this.index.set(hash, name);
    return { status: "queued", evicted };
  }

  /** The oldest `limit` items, head first. Unreadable files are removed and reported through `onCorrupt`. */
  peek(limit: number, onCorrupt: (name: string) => void = () => undefined): QueuedEntry<T>[] {
    const entries: QueuedEntry<T>[] = [];
    for (const [hash, name] of this.index) {
      if (entries.length >= limit) break;
      const stored = this.readEntry(name);
      if (stored === undefined) {
        this.deleteFile(name);
        this.index.delete(hash);
        onCorrupt(name);
        continue;
      }
      entries.push({ name, key: stored.key, payload: stored.payload });
    }
    return entries;
  }

  remove(entry: Pick<QueuedEntry<T>, "name" | "key">): void {
    this.deleteFile(entry.name);
    this.index.delete(keyHash(entry.key));
  }

  private readEntry(name: string): StoredItem<T> | undefined {
    try {
      const parsed: unknown = JSON.parse(readFileSync(join(this.directory, name), "utf8"));
      if (typeof parsed !== "object" || parsed === null) return undefined;
      const { key, enqueuedAt } = parsed as Record<string, unknown>;
      const payload = this.parsePayload((parsed as Record<string, unknown>).payload);
      if (typeof key !== "string" || typeof enqueuedAt !== "string" || payload === undefined)
        return undefined;
      return { key, enqueuedAt, payload };
    } catch {
      return undefined;
    }
  }

  private deleteFile(name: string): void {
    const path = join(this.directory, name);
    if (existsSync(path)) unlinkSync(path);
  }
}
