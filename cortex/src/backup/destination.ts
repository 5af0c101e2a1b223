/**
 * Where backups go. A folder (a USB disk or NAS share mounted into Cortex through a PersistentVolumeClaim): one
 * folder per backup, written under a hidden name and renamed once its manifest is in, so a backup cut short (a
 * crash, a full disk) is never listed and is removed by the next run; erasure tombstones beside them, one file per
 * erased person under the digest of their id, and forget tombstones in one file, so a restore from any backup
 * replays erasures and forgets made after it.
 */
import { createHash, randomBytes } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, open, readdir, readFile, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGzip } from "node:zlib";
import { backupIdPattern } from "@remram/contract";
import {
  type DestinationTombstone,
  forgottenFile,
  forgottenFileName,
  mergeForgotten,
  parseForgottenFile,
} from "../core/backup.js";
import type { ForgottenMark } from "../core/forgotten.js";
import { type BackupManifest, manifestName, parseManifest } from "./manifest.js";

export interface WrittenFile {
  sha256: string;
  bytes: number;
}

export interface BackupWriter {
  /** One file of the backup, from a stream of its bytes (gzip'd on the way when asked). */
  write(name: string, content: AsyncIterable<Uint8Array>, options?: { gzip?: boolean }): Promise<WrittenFile>;
  /** Write the manifest and make the backup visible. */
  commit(manifest: BackupManifest): Promise<void>;
  /** Remove what was written (a failed run). */
  abort(): Promise<void>;
}

export interface BackupDestination {
  /** Where, for messages (a path, never a credential). */
  readonly description: string;
  begin(id: string): Promise<BackupWriter>;
  /** Complete backups, each by its manifest; a folder whose manifest does not parse is skipped. */
  list(): Promise<BackupManifest[]>;
  manifest(id: string): Promise<BackupManifest | undefined>;
  read(id: string, name: string): Readable;
  remove(id: string): Promise<void>;
  /** Record (or move forward) an erasure tombstone. */
  recordTombstone(tombstone: DestinationTombstone): Promise<void>;
  tombstones(): Promise<DestinationTombstone[]>;
  /** Add forget tombstones to the destination's copy (core/backup.ts mergeForgotten). */
  recordForgotten(marks: readonly ForgottenMark[]): Promise<void>;
  /** The destination's copy of forget tombstones; none before the first forget. */
  forgotten(): Promise<ForgottenMark[]>;
}

const subjectPattern = /^[a-f0-9]{64}$/;

/**
 * `content` (gzip'd on the way when asked) into `target`, digested as it passes. One pipeline, so a failing source
 * (OpenSearch gone mid-scan) fails the write instead of stalling it.
 */
export async function writeThrough(
  content: AsyncIterable<Uint8Array>,
  options: { gzip?: boolean } | undefined,
  target: NodeJS.WritableStream,
): Promise<WrittenFile> {
  const hash = createHash("sha256");
  let bytes = 0;
  const digest = async function* (source: AsyncIterable<Uint8Array>) {
    for await (const chunk of source) {
      hash.update(chunk);
      bytes += chunk.length;
      yield chunk;
    }
  };
  if (options?.gzip) await pipeline(content, createGzip(), digest, target);
  else await pipeline(content, digest, target);
  return { sha256: hash.digest("hex"), bytes };
}

/** Newest first by the time taken (two backups in one second have ids that sort by their random part). */
export function newestFirst(manifests: BackupManifest[]): BackupManifest[] {
  return manifests.sort((a, b) => Date.parse(b.takenAt) - Date.parse(a.takenAt) || (a.id < b.id ? 1 : -1));
}

/** A tombstone file's content, or undefined when it is not one. */
export function parseTombstone(text: string | undefined): DestinationTombstone | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = JSON.parse(text) as Partial<DestinationTombstone>;
    if (typeof parsed.subject !== "string" || !subjectPattern.test(parsed.subject)) return undefined;
    if (typeof parsed.erasedAt !== "string" || Number.isNaN(Date.parse(parsed.erasedAt))) return undefined;
    return { subject: parsed.subject, erasedAt: parsed.erasedAt };
  } catch {
    return undefined;
  }
}

export function checkedSubject(subject: string): string {
  if (!subjectPattern.test(subject)) throw new Error("not an erasure subject");
  return subject;
}
const fileNamePattern = /^[a-z0-9][a-z0-9._-]*$/;

function checkedName(name: string): string {
  if (!fileNamePattern.test(name)) throw new Error(`not a backup file name: ${name}`);
  return name;
}

/** Write `bytes` to `path` through a synced temporary file and a rename: whole or not at all. */
async function writeAtomically(path: string, bytes: string): Promise<void> {
  const temporary = `${path}.${randomBytes(6).toString("hex")}.tmp`;
  try {
    const handle = await open(temporary, "wx");
    try {
      await handle.writeFile(bytes, "utf8");
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, path);
  } finally {
    await rm(temporary, { force: true });
  }
}

async function syncFolder(path: string): Promise<void> {
  const handle = await open(path, "r");
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

export class FolderDestination implements BackupDestination {
  constructor(readonly root: string) {}

  get description(): string {
    return this.root;
  }

  private get tombstoneFolder(): string {
    return join(this.root, "tombstones");
  }

  private folder(id: string): string {
    if (!backupIdPattern.test(id)) throw new Error(`not a backup id: ${id}`);
    return join(this.root, id);
  }

  async begin(id: string): Promise<BackupWriter> {
    const final = this.folder(id);
    await mkdir(this.root, { recursive: true });
    // Left by a run that died: never listed, and taking space a full destination needs.
    for (const entry of await readdir(this.root)) {
      if (entry.startsWith(".partial-")) await rm(join(this.root, entry), { recursive: true, force: true });
    }
    const partial = join(this.root, `.partial-${id}`);
    await mkdir(partial);
    return {
      write: async (name, content, options) => {
        const file = createWriteStream(join(partial, checkedName(name)), { flags: "wx", flush: true });
        return writeThrough(content, options, file);
      },
      commit: async (manifest) => {
        await writeAtomically(join(partial, manifestName), `${JSON.stringify(manifest, null, 2)}\n`);
        await syncFolder(partial);
        await rename(partial, final);
        await syncFolder(this.root);
      },
      abort: () => rm(partial, { recursive: true, force: true }),
    };
  }

  async manifest(id: string): Promise<BackupManifest | undefined> {
    const text = await readFile(join(this.folder(id), manifestName), "utf8").catch(() => undefined);
    return parseManifest(text, id);
  }

  async list(): Promise<BackupManifest[]> {
    let entries: string[];
    try {
      entries = await readdir(this.root);
    } catch (error) {
      // Not there yet: nothing backed up. Anything else (an unmounted disk, no permission) is reported.
      if ((error as { code?: string }).code === "ENOENT") return [];
      throw error;
    }
    const manifests: BackupManifest[] = [];
    for (const entry of entries
      .filter((name) => backupIdPattern.test(name))
      .sort()
      .reverse()) {
      const manifest = await this.manifest(entry);
      if (manifest !== undefined) manifests.push(manifest);
    }
    return newestFirst(manifests);
  }

  read(id: string, name: string): Readable {
    return createReadStream(join(this.folder(id), checkedName(name)));
  }

  async remove(id: string): Promise<void> {
    const folder = this.folder(id);
    // Out of the listing first (a rename is atomic), then its files.
    const doomed = join(this.root, `.partial-removed-${id}`);
    await rename(folder, doomed);
    await rm(doomed, { recursive: true, force: true });
  }

  async recordTombstone({ subject, erasedAt }: DestinationTombstone): Promise<void> {
    await mkdir(this.tombstoneFolder, { recursive: true });
    const path = join(this.tombstoneFolder, `${checkedSubject(subject)}.json`);
    const existing = await readTombstone(path);
    // A later erasure moves the line forward; an older one never moves it back.
    if (existing !== undefined && Date.parse(existing.erasedAt) >= Date.parse(erasedAt)) return;
    await writeAtomically(path, `${JSON.stringify({ subject, erasedAt })}\n`);
  }

  async tombstones(): Promise<DestinationTombstone[]> {
    let entries: string[];
    try {
      entries = await readdir(this.tombstoneFolder);
    } catch (error) {
      // A restore must not go on without the erasures it is to replay.
      if ((error as { code?: string }).code === "ENOENT") return [];
      throw error;
    }
    const found: DestinationTombstone[] = [];
    for (const entry of entries.filter((name) => name.endsWith(".json")).sort()) {
      const tombstone = await readTombstone(join(this.tombstoneFolder, entry));
      if (tombstone !== undefined) found.push(tombstone);
    }
    return found;
  }

  async recordForgotten(marks: readonly ForgottenMark[]): Promise<void> {
    if (marks.length === 0) return;
    await mkdir(this.root, { recursive: true });
    const merged = mergeForgotten(await this.forgotten(), marks);
    if (merged.changed)
      await writeAtomically(join(this.root, forgottenFileName), forgottenFile(merged.marks));
  }

  async forgotten(): Promise<ForgottenMark[]> {
    let text: string;
    try {
      text = await readFile(join(this.root, forgottenFileName), "utf8");
    } catch (error) {
      if ((error as { code?: string }).code === "ENOENT") return [];
      throw error;
    }
    return parseForgottenFile(text);
  }
}

async function readTombstone(path: string): Promise<DestinationTombstone | undefined> {
  return parseTombstone(await readFile(path, "utf8").catch(() => undefined));
}
