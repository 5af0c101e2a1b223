import { z } from "zod";
import { isoTimestamp } from "./common.js";

/**
 * Backups of everything Cortex keeps (POST /admin/backups) and their restore onto an empty Cortex (POST
 * /admin/restore). A backup is one folder in the destination: every Cortex index as its documents, the workspace
 * repository as a git bundle, the archive's documents, and a manifest with counts and digests, written last so a
 * backup cut short is never listed. Both run in the background; GET reports progress and the last outcome.
 */

/** backup-<UTC time>-<random>: sorts by time, names no person. */
export const backupIdPattern = /^backup-\d{8}T\d{6}Z-[a-f0-9]{6}$/;
export const backupId = z.string().regex(backupIdPattern, "a backup id: backup-<yyyymmddThhmmssZ>-<6 hex>");

export const backupFile = z.object({
  /** The file's name in the backup's folder. */
  name: z.string(),
  sha256: z.string(),
  bytes: z.int().min(0),
  /** Documents (index lines, archived documents) it holds; 0 for the repository bundle. */
  documents: z.int().min(0),
});
export type BackupFile = z.output<typeof backupFile>;

/**
 * A file the caller adds to a backup as it is (the operator's bundle of the appliance's Secrets, encrypted to the
 * user's key): Cortex cannot read it and never restores it; it sits in the backup beside the other files, its
 * digest in the manifest, for the user to take out.
 */
export const backupAttachmentPattern = /^attachment-[a-z0-9][a-z0-9.-]{0,62}$/;

/**
 * The attachment Cortex itself adds when it has the gateway's folder and the household's age keys: that folder
 * (sessions, pairings, config) as a gzipped tar encrypted to those keys.
 */
export const gatewayStateAttachmentName = "attachment-gateway-state.tar.gz.age";
export const backupAttachment = z
  .object({
    name: z.string().regex(backupAttachmentPattern, "attachment-<lowercase letters, digits, dots, dashes>"),
    /** At most 256 KiB once decoded. */
    contentBase64: z.base64().max(349_528),
  })
  .strict();
export type BackupAttachment = z.output<typeof backupAttachment>;

export const backupRequest = z
  .object({
    attachments: z
      .array(backupAttachment)
      .max(4)
      .refine(
        (list) => new Set(list.map((file) => file.name)).size === list.length,
        "attachment names repeat",
      )
      .default([]),
  })
  .strict();
export type BackupRequest = z.input<typeof backupRequest>;

export const backupSummary = z.object({
  id: backupId,
  takenAt: isoTimestamp,
  completedAt: isoTimestamp,
  bytes: z.int().min(0),
  /** Documents per Cortex index (by its name without the prefix), archived documents, commits. */
  counts: z.record(z.string(), z.int().min(0)),
  embedding: z.object({ model: z.string(), dimensions: z.int().min(1) }),
  /** The attachments it holds, by name. */
  attachments: z.array(z.string()).optional(),
});
export type BackupSummary = z.output<typeof backupSummary>;

export const runPhases = ["indices", "repository", "archive", "verify", "erasures", "done"] as const;

/** A backup or restore running now: which phase, and documents done so far. */
export const runProgress = z.object({
  id: backupId,
  startedAt: isoTimestamp,
  phase: z.enum(runPhases),
  documentsDone: z.int().min(0),
  /** Documents the run will move in all, once known (after the manifest is read, or the counts are taken). */
  documentsTotal: z.int().min(0).optional(),
});
export type RunProgress = z.output<typeof runProgress>;

export const runFailure = z.object({
  id: backupId,
  failedAt: isoTimestamp,
  error: z.string(),
});

export const backupsResponse = z.object({
  /** Whether Cortex has a backup destination at all (CORTEX_BACKUP_DIR). */
  configured: z.boolean(),
  running: runProgress.optional(),
  lastFailure: runFailure.optional(),
  /** Complete backups in the destination, newest first (empty when it could not be listed). */
  backups: z.array(backupSummary),
  /** Why the destination could not be listed (unreachable, credentials refused). */
  destinationError: z.string().optional(),
});
export type BackupsResponse = z.output<typeof backupsResponse>;

export const backupStarted = z.object({ id: backupId, startedAt: isoTimestamp });
export type BackupStarted = z.output<typeof backupStarted>;

export const restoreRequest = z.object({ backupId }).strict();
export type RestoreRequest = z.output<typeof restoreRequest>;

export const restoreReport = z.object({
  backupId,
  restoredAt: isoTimestamp,
  durationMs: z.int().min(0),
  /** What was written back, counted like the backup's own counts. */
  counts: z.record(z.string(), z.int().min(0)),
  /** Erasures recorded in the destination after the backup was taken, replayed on what it restored. */
  erasuresReplayed: z.int().min(0),
  /** Objects forgotten (POST /person/knowledge/forget) after the backup was taken, forgotten again. */
  forgetsReplayed: z.int().min(0).default(0),
});
export type RestoreReport = z.output<typeof restoreReport>;

export const restoreStatus = z.object({
  running: runProgress.optional(),
  lastFailure: runFailure.optional(),
  last: restoreReport.optional(),
});
export type RestoreStatus = z.output<typeof restoreStatus>;
