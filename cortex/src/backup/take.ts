/**
 * Taking a backup: every index's documents from snapshots opened one after another before any is read (backup/
 * indices.ts says in which order), then the repository bundle and the archive's documents, which only grow while
 * the backup runs, so everything an index entry refers to is in. Each file is gzip'd NDJSON streamed into the
 * destination and digested on the way; the manifest goes last.
 */
import { createReadStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Readable } from "node:stream";
import type { BackupFile, RunProgress } from "@remram/contract";
import type { CortexContext } from "../context.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { request } from "../store/client.js";
import { type SearchHit, scanDocuments } from "../store/reads.js";
import { templateVersion } from "../store/templates.js";
import type { BackupDestination } from "./destination.js";
import { type BackedUpIndex, backedUpIndices } from "./indices.js";
import {
  type ArchiveLine,
  archiveFileName,
  type BackupManifest,
  backupFormat,
  type IndexLine,
  indexFileName,
  repositoryBundleName,
} from "./manifest.js";

/** What a backup reads beside the indices. */
export interface BackupSources {
  indices: () => Promise<MaturationIndices>;
  archive: () => Promise<{
    entries(): readonly { hash: string; archivedAt: string }[];
    getBytes(hash: string): Promise<Buffer>;
  }>;
  repository: () => Promise<{ bundle(path: string): Promise<{ head: string | null; commits: number }> }>;
  /** The gateway's state, sealed to the household's keys (absent: not backed up by Cortex). */
  gatewayState?: { name: string; read: () => Promise<Readable> };
}

type Context = Pick<CortexContext, "store" | "config">;

/** Snapshots wait this long between pages: the last index opened is read after all the others. */
const snapshotKeepAlive = "30m";
const pageSize = 1000;

interface Snapshot {
  pages: AsyncGenerator<SearchHit<unknown>[]>;
  /** Ends the snapshot early (a failed backup), so it is not left open until it times out. */
  release(): Promise<void>;
}

/** An index's snapshot, opened now (its first page fetched) and read later. */
async function openSnapshot(context: Context, target: BackedUpIndex): Promise<Snapshot> {
  const exists = await request(context.store, "HEAD", `/${target.index}`, undefined, { ignore: [404] });
  const scan =
    exists.statusCode === 404
      ? undefined
      : scanDocuments<unknown>(
          context.store,
          target.index,
          { match_all: {} },
          { pageSize, keepAlive: snapshotKeepAlive },
        );
  const first = await scan?.next();
  return {
    pages: (async function* () {
      if (scan === undefined || first === undefined || first.done === true) return;
      yield first.value;
      yield* scan;
    })(),
    release: async () => {
      await scan?.return(undefined);
    },
  };
}

function* jsonLines<T>(items: readonly T[]): Generator<Buffer> {
  for (const item of items) yield Buffer.from(`${JSON.stringify(item)}\n`);
}

/** A file the caller adds to the backup as it is (contract's backupAttachment, decoded). */
export interface BackupAttachmentFile {
  name: string;
  content: Buffer;
}

export async function takeBackup(
  context: Context,
  sources: BackupSources,
  destination: BackupDestination,
  run: { id: string; takenAt: string; progress: RunProgress; attachments?: readonly BackupAttachmentFile[] },
): Promise<BackupManifest> {
  const { store } = context;
  const { progress } = run;
  const writer = await destination.begin(run.id);
  const scratch = await mkdtemp(join(tmpdir(), "remram-backup-"));
  const snapshots: Snapshot[] = [];
  try {
    const targets = backedUpIndices(store, await sources.indices());
    // Every acknowledged write visible to the snapshots.
    await request(
      store,
      "POST",
      `/${targets.map((t) => t.index).join(",")}/_refresh?ignore_unavailable=true`,
    );
    for (const target of targets) snapshots.push(await openSnapshot(context, target));

    const files: BackupFile[] = [];
    const counts: Record<string, number> = {};
    for (const [position, target] of targets.entries()) {
      let documents = 0;
      const snapshot = snapshots[position];
      if (snapshot === undefined) continue;
      const lines = async function* () {
        for await (const hits of snapshot.pages) {
          documents += hits.length;
          progress.documentsDone += hits.length;
          yield* jsonLines(hits.map((hit): IndexLine => ({ _id: hit._id, _source: hit._source })));
        }
      };
      const name = indexFileName(target.name);
      const written = await writer.write(name, lines(), { gzip: true });
      files.push({ name, ...written, documents });
      counts[target.name] = documents;
    }

    progress.phase = "repository";
    const bundlePath = join(scratch, repositoryBundleName);
    const repository = await (await sources.repository()).bundle(bundlePath);
    if (repository.head !== null) {
      const written = await writer.write(repositoryBundleName, createReadStream(bundlePath));
      files.push({ name: repositoryBundleName, ...written, documents: 0 });
    }
    counts.commits = repository.commits;

    progress.phase = "archive";
    const archive = await sources.archive();
    const entries = archive.entries();
    const archiveLines = async function* () {
      for (const entry of entries) {
        const bytes = await archive.getBytes(entry.hash);
        progress.documentsDone += 1;
        const line: ArchiveLine = {
          hash: entry.hash,
          archivedAt: entry.archivedAt,
          canonical: bytes.toString("utf8"),
        };
        yield Buffer.from(`${JSON.stringify(line)}\n`);
      }
    };
    const archiveFile = await writer.write(archiveFileName, archiveLines(), { gzip: true });
    files.push({ name: archiveFileName, ...archiveFile, documents: entries.length });
    counts.archivedDocuments = entries.length;

    for (const attachment of run.attachments ?? []) {
      const written = await writer.write(attachment.name, Readable.from([attachment.content]));
      files.push({ name: attachment.name, ...written, documents: 0 });
    }
    if (sources.gatewayState !== undefined) {
      const { name, read } = sources.gatewayState;
      files.push({ name, ...(await writer.write(name, await read())), documents: 0 });
    }

    const manifest: BackupManifest = {
      format: backupFormat,
      id: run.id,
      takenAt: run.takenAt,
      completedAt: new Date().toISOString(),
      bytes: files.reduce((sum, file) => sum + file.bytes, 0),
      counts,
      embedding: { model: context.config.embedModel, dimensions: store.embedDimensions },
      templateVersion,
      files,
      repository,
    };
    await writer.commit(manifest);
    progress.phase = "done";
    return manifest;
  } catch (error) {
    await writer.abort().catch(() => undefined);
    throw error;
  } finally {
    // Snapshots not read to the end (a failure) are released rather than left to time out.
    for (const snapshot of snapshots) await snapshot.release().catch(() => undefined);
    await rm(scratch, { recursive: true, force: true });
  }
}
