/**
 * Restoring a backup onto an empty Cortex: every file checked against its digest before anything is written, the
 * indices filled with the same documents under the same ids, the repository from its bundle, the archive's
 * documents re-hashed as they land; then the erasures recorded in the destination after the backup was taken, and
 * the forgets it recorded, are replayed on what came back, so an erased person's data or a forgotten object never
 * returns. A restore cut short (a NAS gone, Cortex
 * restarted) may be run again over what it wrote (restore-marker.ts).
 */
import { createHash } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pipeline } from "node:stream/promises";
import { StringDecoder } from "node:string_decoder";
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
  type TargetContents,
} from "../core/backup.js";
import { type ForgottenMark, forgottenIdSubject } from "../core/forgotten.js";
import { ensureForgottenIndex, recordForgottenMarks } from "../knowledge/forgotten.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { ensureTombstoneIndex, recordSubjectTombstone, tombstoneIndex } from "../knowledge/tombstones.js";
import { request } from "../store/client.js";
import { scanDocuments } from "../store/reads.js";
import { templateVersion } from "../store/templates.js";
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
import { readRestoreMarker, writeRestoreMarker } from "./restore-marker.js";

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
    /** `overRestored`: the repository may hold what a cut-short restore of the same bundle fetched. */
    restore(path: string, overRestored?: boolean): Promise<{ head: string | null; commits: number }>;
  }>;
  /** Erase a person as /admin/erasure does (archive/erasure.ts), for a replayed erasure. */
  erase: (userId: string, reason: string) => Promise<ErasureOutcome>;
  /**
   * Forget these objects again as /person/knowledge/forget does (person-knowledge/forget.ts), for a replayed
   * forget; answers how many it removed.
   */
  forget: (ids: readonly string[], forgottenAt: string, reason: string) => Promise<number>;
}

type Context = Pick<CortexContext, "store" | "policy" | "config">;

const batchSize = 500;

/** What this Cortex holds that a restore would overwrite or mix with (also: whether a backup would be empty). */
export async function heldData(
  context: Pick<CortexContext, "store">,
  targets: RestoreTargets,
): Promise<TargetContents> {
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
  return {
    documents,
    archivedDocuments: (await targets.archive()).size,
    commits: (await (await targets.repository()).check()).commits,
  };
}

/** A restore that may go ahead; `resuming`: it finishes a cut-short restore of the same backup. */
export interface RestorePlan {
  manifest: BackupManifest;
  resuming: boolean;
}

/**
 * Whether this backup can be restored here: it exists, was embedded by this Cortex's model, comes from a template
 * version this Cortex knows, and Cortex holds nothing, or only what a cut-short restore of the same backup wrote.
 */
export async function checkRestorable(
  context: Context,
  targets: RestoreTargets,
  destination: BackupDestination,
  backupId: string,
): Promise<RestorePlan> {
  const manifest = await destination.manifest(backupId);
  if (manifest === undefined)
    throw new RestoreRefusedError(`no complete backup ${backupId} in ${destination.description}`, 404);
  const { embedModel } = context.config;
  const dimensions = context.store.embedDimensions;
  if (manifest.embedding.dimensions !== dimensions || manifest.embedding.model !== embedModel)
    throw new RestoreRefusedError(
      `backup ${backupId} holds ${manifest.embedding.dimensions}-dimensional vectors of ${manifest.embedding.model}; this Cortex embeds with ${embedModel} (${dimensions} dimensions), and vectors of another model would rank nonsense`,
      409,
    );
  if (manifest.templateVersion > templateVersion)
    throw new RestoreRefusedError(
      `backup ${backupId} comes from a newer Cortex (index templates v${manifest.templateVersion}; this one knows v${templateVersion}): restore it with that release`,
      409,
    );
  const unfinished = await readRestoreMarker(context.store);
  if (unfinished !== undefined && unfinished.backupId !== backupId)
    throw new RestoreRefusedError(
      `this Cortex holds part of a restore of ${unfinished.backupId} (started ${unfinished.startedAt}) that did not finish: restore ${unfinished.backupId} again to finish it`,
      409,
    );
  if (unfinished === undefined) {
    const reason = notEmptyReason(await heldData(context, targets));
    if (reason !== undefined) throw new RestoreRefusedError(reason, 409);
  }
  return { manifest, resuming: unfinished !== undefined };
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

/**
 * The JSON lines of one gzip'd file of the backup. One pipeline: a read that fails halfway (a connection reset, an
 * I/O error on a USB disk) fails the restore instead of leaving it waiting; stopping early closes the file.
 */
async function* fileLines<T>(destination: BackupDestination, id: string, name: string): AsyncGenerator<T> {
  const source = destination.read(id, name);
  const gunzip = createGunzip();
  const piped = pipeline(source, gunzip);
  piped.catch(() => undefined); // its error reaches the loop below through gunzip
  const decoder = new StringDecoder("utf8");
  let pending = "";
  try {
    for await (const chunk of gunzip) {
      pending += decoder.write(chunk as Buffer);
      const lines = pending.split("\n");
      pending = lines.pop() ?? "";
      for (const line of lines) if (line !== "") yield JSON.parse(line) as T;
    }
    pending += decoder.end();
    if (pending.trim() !== "") yield JSON.parse(pending) as T;
    await piped;
  } finally {
    source.destroy();
    gunzip.destroy();
  }
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
  { manifest, resuming }: RestorePlan,
  progress: RunProgress,
): Promise<RestoredData> {
  const { store } = context;
  const counts: Record<string, number> = {};
  const named = new Set<string>();
  progress.documentsTotal = manifest.files.reduce((sum, file) => sum + file.documents, 0);
  await verifyFiles(destination, manifest);
  // From here on a failure leaves part of the backup: the marker lets the same backup be restored over it.
  await writeRestoreMarker(store, { backupId: manifest.id, startedAt: progress.startedAt });

  progress.phase = "indices";
  await ensureTombstoneIndex(store);
  await ensureForgottenIndex(store);
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
      counts.commits = (await (await targets.repository()).restore(bundlePath, resuming)).commits;
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

/**
 * Forgets the destination recorded: their tombstones go into the restored `-forgotten` index (ingest and reflection
 * refuse the objects again), and every restored object whose id a tombstone names is forgotten again, with that
 * forget's time. A backup taken after a forget holds neither the objects nor anything to do. Answers how many
 * objects were removed.
 */
export async function replayForgotten(
  { store }: Context,
  targets: RestoreTargets,
  marks: readonly ForgottenMark[],
): Promise<number> {
  if (marks.length === 0) return 0;
  await recordForgottenMarks(store, marks);
  const forgottenAt = new Map(
    marks.filter((mark) => mark.kind === "object").map((mark) => [mark.subject, mark.forgottenAt]),
  );
  const byTime = new Map<string, string[]>();
  await request(store, "POST", `/${store.indices.knowledge}/_refresh`);
  for await (const hits of scanDocuments<unknown>(store, store.indices.knowledge, { match_all: {} })) {
    for (const hit of hits) {
      const at = forgottenAt.get(forgottenIdSubject(hit._id));
      if (at === undefined) continue;
      const ids = byTime.get(at) ?? [];
      ids.push(hit._id);
      byTime.set(at, ids);
    }
  }
  let removed = 0;
  for (const [at, ids] of [...byTime].sort(([a], [b]) => (a < b ? -1 : 1)))
    removed += await targets.forget(ids, at, `replaying a forget of ${at}, after a restore`);
  return removed;
}
