/**
 * Restoring a backup onto an empty Cortex: every file checked against its digest before anything is written, the
 * indices filled with the same documents under the same ids, the repository from its bundle, the archive's
 * documents re-hashed as they land; then the erasures recorded in the destination after the backup was taken are
 * replayed on what came back, so an erased person's data never returns.
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import type { RunProgress } from "@remram/contract";
import type { ErasureOutcome } from "../archive/erasure.js";
import type { CortexContext } from "../context.js";
import {
  type DestinationTombstone,
  erasedPeople,
  erasuresAfter,
  namedUserIds,
  notEmptyReason,
} from "../core/backup.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { ensureTombstoneIndex, recordSubjectTombstone, tombstoneIndex } from "../knowledge/tombstones.js";
import { request } from "../store/client.js";
import { bulk, bulkFailure } from "../store/writes.js";
import type { BackupDestination } from "./destination.js";
import { backedUpIndices } from "./indices.js";
import {
  type ArchiveLine,
  archiveFileName,
  type BackupManifest,
  type IndexLine,
  indexFileName,
  repositoryBundleName,
} from "./manifest.js";

/** A restore refused before it starts (the routes answer 404 or 409 with the message). */
export class RestoreRefusedError extends Error {
  override readonly name = "RestoreRefusedError";
  constructor(
    message: string,
    readonly status: 404 | 409,
  ) {
    super(message);
  }
}

export interface RestoreTargets {
  indices: () => Promise<MaturationIndices>;
  archive: () => Promise<{
    readonly size: number;
    restore(hash: string, bytes: Buffer, archivedAt: string): Promise<{ stored: boolean }>;
  }>;
  repository: () => Promise<{
    check(): Promise<{ commits: number }>;
    restore(path: string): Promise<{ head: string | null; commits: number }>;
  }>;
  /** Erase a person as /admin/erasure does (archive/erasure.ts), for a replayed erasure. */
  erase: (userId: string, reason: string) => Promise<ErasureOutcome>;
}

type Context = Pick<CortexContext, "store" | "policy">;

const batchSize = 500;

/** Whether this backup can be restored here: it exists, fits this Cortex's vectors, and Cortex holds nothing. */
export async function checkRestorable(
  context: Context,
  targets: RestoreTargets,
  destination: BackupDestination,
  backupId: string,
): Promise<BackupManifest> {
  const manifest = await destination.manifest(backupId);
  if (manifest === undefined)
    throw new RestoreRefusedError(`no complete backup ${backupId} in ${destination.description}`, 404);
  const dimensions = context.store.embedDimensions;
  if (manifest.embedding.dimensions !== dimensions)
    throw new RestoreRefusedError(
      `backup ${backupId} holds ${manifest.embedding.dimensions}-dimensional vectors of ${manifest.embedding.model}; this Cortex embeds with ${dimensions} dimensions`,
      409,
    );
  const documents: Record<string, number> = {};
  for (const { name, index } of backedUpIndices(context.store, await targets.indices())) {
    const { statusCode, body } = await request<{ count: number }>(
      context.store,
      "GET",
      `/${index}/_count`,
      undefined,
      { ignore: [404] },
    );
    documents[name] = statusCode === 404 ? 0 : body.count;
  }
  const reason = notEmptyReason({
    documents,
    archivedDocuments: (await targets.archive()).size,
    commits: (await (await targets.repository()).check()).commits,
  });
  if (reason !== undefined) throw new RestoreRefusedError(reason, 409);
  return manifest;
}

async function verifyFiles(destination: BackupDestination, manifest: BackupManifest): Promise<void> {
  for (const file of manifest.files) {
    const hash = createHash("sha256");
    for await (const chunk of destination.read(manifest.id, file.name)) hash.update(chunk as Buffer);
    const actual = hash.digest("hex");
    if (actual !== file.sha256)
      throw new Error(
        `backup ${manifest.id}: ${file.name} does not match its digest (${actual}); nothing was restored`,
      );
  }
}

/** The JSON lines of one gzip'd file of the backup. */
async function* fileLines<T>(destination: BackupDestination, id: string, name: string): AsyncGenerator<T> {
  const lines = createInterface({
    input: destination.read(id, name).pipe(createGunzip()),
    crlfDelay: Infinity,
  });
  for await (const line of lines) if (line !== "") yield JSON.parse(line) as T;
}

/** What the data phase wrote back, and the people its documents name (for the erasure replay). */
export interface RestoredData {
  counts: Record<string, number>;
  named: ReadonlySet<string>;
}

/** The data phase: verify, then indices, repository and archive. Runs as a shared section of the erasure gate. */
export async function restoreData(
  context: Context,
  targets: RestoreTargets,
  destination: BackupDestination,
  manifest: BackupManifest,
  progress: RunProgress,
): Promise<RestoredData> {
  const { store } = context;
  const counts: Record<string, number> = {};
  const named = new Set<string>();
  progress.documentsTotal = manifest.files.reduce((sum, file) => sum + file.documents, 0);
  await verifyFiles(destination, manifest);

  progress.phase = "indices";
  await ensureTombstoneIndex(store);
  const present = new Set(manifest.files.map((file) => file.name));
  const indices = backedUpIndices(store, await targets.indices());
  for (const { name, index } of indices) {
    counts[name] = 0;
    if (!present.has(indexFileName(name))) continue;
    let batch: IndexLine[] = [];
    const flush = async () => {
      if (batch.length === 0) return;
      const results = await bulk(
        store,
        batch.flatMap((line) => [{ index: { _index: index, _id: line._id } }, line._source]),
        { timeoutMs: 60_000 },
      );
      const failed = results.filter((result) => result.status >= 300);
      if (failed.length > 0)
        throw bulkFailure(`restoring ${name}: ${failed.length} documents refused`, failed);
      counts[name] = (counts[name] ?? 0) + batch.length;
      progress.documentsDone += batch.length;
      batch = [];
    };
    for await (const line of fileLines<IndexLine>(destination, manifest.id, indexFileName(name))) {
      for (const userId of namedUserIds(line._source)) named.add(userId);
      batch.push(line);
      if (batch.length >= batchSize) await flush();
    }
    await flush();
  }

  progress.phase = "repository";
  counts.commits = 0;
  if (present.has(repositoryBundleName)) {
    const scratch = await mkdtemp(join(tmpdir(), "remram-restore-"));
    try {
      const bundlePath = join(scratch, repositoryBundleName);
      await pipeline(destination.read(manifest.id, repositoryBundleName), createWriteStream(bundlePath));
      counts.commits = (await (await targets.repository()).restore(bundlePath)).commits;
    } finally {
      await rm(scratch, { recursive: true, force: true });
    }
  }

  progress.phase = "archive";
  const archive = await targets.archive();
  counts.archivedDocuments = 0;
  for await (const line of fileLines<ArchiveLine>(destination, manifest.id, archiveFileName)) {
    await archive.restore(line.hash, Buffer.from(line.canonical, "utf8"), line.archivedAt);
    counts.archivedDocuments += 1;
    progress.documentsDone += 1;
  }
  await request(
    store,
    "POST",
    `/${[...indices.map((i) => i.index), tombstoneIndex(store)].join(",")}/_refresh`,
  );
  // The dimension policy came back with the registry.
  await context.policy.load(store);

  return { counts, named };
}

/**
 * Erasures made after the backup: each tombstone is recorded with its own time (later writes of those people
 * observed before it stay refused), and whoever the restored data names among them is erased again. Outside the
 * erasure gate's shared section: each replay is an erasure of its own.
 */
export async function replayErasures(
  { store }: Context,
  targets: RestoreTargets,
  manifest: BackupManifest,
  tombstones: readonly DestinationTombstone[],
  named: ReadonlySet<string>,
): Promise<number> {
  const later = erasuresAfter(tombstones, manifest.takenAt);
  for (const tombstone of later) await recordSubjectTombstone(store, tombstone.subject, tombstone.erasedAt);
  const people = erasedPeople(later, named);
  for (const person of people) {
    await targets.erase(
      person.userId,
      `replaying an erasure of ${person.erasedAt}, after backup ${manifest.id}`,
    );
  }
  return people.length;
}
