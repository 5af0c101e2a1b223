/**
 * A backup's manifest, `manifest.json` in its folder: written last, so a folder without one is a backup cut short.
 * It names every file with its digest, so a restore verifies everything before it writes anything.
 */
import { backupFile, backupSummary } from "@remram/contract";
import { z } from "zod";

/** Bump when the layout changes; a restore refuses a format it does not know. */
export const backupFormat = 1;

export const backupManifest = backupSummary.extend({
  format: z.literal(backupFormat),
  /** The index template version the documents were written under (store/templates.ts). */
  templateVersion: z.int().min(1),
  files: z.array(backupFile),
  repository: z.object({ head: z.string().nullable(), commits: z.int().min(0) }),
});
export type BackupManifest = z.output<typeof backupManifest>;

export const manifestName = "manifest.json";

/** A manifest file's content, if it is the manifest of backup `id` (anything else: a backup that is not there). */
export function parseManifest(text: string | undefined, id: string): BackupManifest | undefined {
  if (text === undefined) return undefined;
  try {
    const parsed = backupManifest.safeParse(JSON.parse(text));
    return parsed.success && parsed.data.id === id ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
/** The workspace repository, as `git bundle create --all` writes it; absent when the repository has no commit. */
export const repositoryBundleName = "repository.bundle";
/** The archive's documents, one JSON line each: hash, archiving time, canonical bytes as text. */
export const archiveFileName = "archive.ndjson.gz";

export function indexFileName(index: string): string {
  return `index-${index}.ndjson.gz`;
}

/** One line of an index file. */
export interface IndexLine {
  _id: string;
  _source: unknown;
}

/** One line of the archive file. */
export interface ArchiveLine {
  hash: string;
  archivedAt: string;
  canonical: string;
}
