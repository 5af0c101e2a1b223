/**
 * Backups and restores as runs in the background: one at a time (a restore never mixes with a backup), progress
 * readable while they go, the last outcome kept. A backup runs as a shared section of the erasure gate, so it never
 * reads an erasure half done; erasures wait for it, and record their tombstone in the destination once done.
 * Retention removes all but the newest `keep` backups after each successful one.
 */
import { randomBytes } from "node:crypto";
import {
  type BackupStarted,
  type BackupsResponse,
  backupAttachmentPattern,
  type RestoreReport,
  type RestoreStatus,
  type RunProgress,
} from "@remram/contract";
import type { CortexContext } from "../context.js";
import { backupIdFor, backupsToRemove, type DestinationTombstone, notEmptyReason } from "../core/backup.js";
import { erasureSubject } from "../core/erasure.js";
import type { ForgottenMark } from "../core/forgotten.js";
import { erasureGate } from "../knowledge/erasure-gate.js";
import { readForgottenMarks } from "../knowledge/forgotten.js";
import { readTombstones } from "../knowledge/tombstones.js";
import type { BackupDestination } from "./destination.js";
import type { BackupManifest } from "./manifest.js";
import {
  checkRestorable,
  heldData,
  RestoreRefusedError,
  type RestoreTargets,
  replayErasures,
  replayForgotten,
  restoreData,
} from "./restore.js";
import { readRestoreMarker, writeRestoreMarker } from "./restore-marker.js";
import { type BackupAttachmentFile, type BackupSources, takeBackup } from "./take.js";

/** Refused because another run holds the service (409). */
export class BackupBusyError extends Error {
  override readonly name = "BackupBusyError";
}

/** Refused because it would do harm (409): an empty Cortex backing up over backups with data. */
export class BackupRefusedError extends Error {
  override readonly name = "BackupRefusedError";
}

type Failure = { id: string; failedAt: string; error: string };

export interface BackupOutcome {
  manifest?: BackupManifest;
  error?: unknown;
  /** The backup is complete; syncing tombstones or retention after it failed. */
  housekeepingError?: unknown;
  durationMs: number;
}

export class BackupService {
  private running: { kind: "backup" | "restore"; progress: RunProgress; done: Promise<unknown> } | undefined;
  private lastBackupFailure: Failure | undefined;
  private lastRestoreFailure: Failure | undefined;
  private lastRestore: RestoreReport | undefined;
  private tombstoneWrites: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly context: Pick<CortexContext, "store" | "config" | "clock" | "policy">,
    private readonly destination: BackupDestination | undefined,
    private readonly sources: BackupSources & RestoreTargets,
    private readonly settings: { keep: number },
  ) {}

  get configured(): boolean {
    return this.destination !== undefined;
  }

  private target(): BackupDestination {
    if (this.destination === undefined)
      throw new RestoreRefusedError(
        "Cortex has no backup destination (neither CORTEX_BACKUP_DIR nor CORTEX_BACKUP_S3_ENDPOINT is set)",
        409,
      );
    return this.destination;
  }

  private refuseWhileBusy(): void {
    if (this.running !== undefined)
      throw new BackupBusyError(
        `a ${this.running.kind} (${this.running.progress.id}) is running; wait for it (GET /admin/${this.running.kind === "backup" ? "backups" : "restore"})`,
      );
  }

  private claim(kind: "backup" | "restore", id: string, startedAt: string): RunProgress {
    this.refuseWhileBusy();
    return { id, startedAt, phase: kind === "backup" ? "indices" : "verify", documentsDone: 0 };
  }

  /** Start a backup; resolves once it is running, with its id. `finished` settles when it ends. */
  async startBackup(
    attachments: readonly BackupAttachmentFile[] = [],
  ): Promise<BackupStarted & { finished: Promise<BackupOutcome> }> {
    const destination = this.target();
    this.refuseWhileBusy();
    await this.refuseUnsafeBackup(destination);
    const takenAt = this.context.clock();
    const id = backupIdFor(takenAt, randomBytes(3).toString("hex"));
    const progress = this.claim("backup", id, takenAt.toISOString());
    const started = performance.now();
    const finished = erasureGate(this.context.store)
      .shared("a backup", () =>
        takeBackup(this.context, this.sources, destination, {
          id,
          takenAt: progress.startedAt,
          progress,
          attachments,
        }),
      )
      .then(
        async (manifest): Promise<Omit<BackupOutcome, "durationMs">> => {
          this.lastBackupFailure = undefined;
          try {
            await this.afterBackup(destination);
            return { manifest };
          } catch (error) {
            return { manifest, housekeepingError: error };
          }
        },
        (error: unknown): Omit<BackupOutcome, "durationMs"> => {
          this.lastBackupFailure = {
            id,
            failedAt: this.context.clock().toISOString(),
            error: messageOf(error),
          };
          return { error };
        },
      )
      .then((outcome): BackupOutcome => {
        this.running = undefined;
        return { ...outcome, durationMs: performance.now() - started };
      });
    this.running = { kind: "backup", progress, done: finished };
    return { id, startedAt: progress.startedAt, finished };
  }

  /**
   * A Cortex holding part of a restore backs up nothing (the backup would hold half of one), and neither does one
   * that holds nothing (a new appliance waiting for `kubectl remram restore`) while the destination holds backups
   * with data: retention would replace them, one a day, with empty ones.
   */
  private async refuseUnsafeBackup(destination: BackupDestination): Promise<void> {
    const unfinished = await readRestoreMarker(this.context.store);
    if (unfinished !== undefined)
      throw new BackupRefusedError(
        `this Cortex holds part of a restore of ${unfinished.backupId} that did not finish: restore it again (kubectl remram restore ${unfinished.backupId}) before backing up, or the backup would hold half of it`,
      );
    if (notEmptyReason(await heldData(this.context, this.sources)) !== undefined) return;
    // A destination that cannot be listed fails the backup itself, with its reason in the listing.
    const withData = (await destination.list().catch(() => [])).filter(
      (backup) =>
        (backup.counts.knowledge ?? 0) +
          (backup.counts.archivedDocuments ?? 0) +
          (backup.counts.commits ?? 0) >
        0,
    );
    if (withData.length > 0)
      throw new BackupRefusedError(
        `this Cortex holds no data yet and ${destination.description} holds ${withData.length} backups that do (newest ${withData[0]?.id}): restore one (kubectl remram restore ID) before backing up, or retention would replace them with empty ones`,
      );
  }

  /**
   * After a successful backup: the tombstones of every erasure and forget so far into the destination (one made
   * while it was unreachable catches up here), then retention. A failure here leaves an extra backup or a tombstone
   * for the next run, never a missing backup; the route logs it.
   */
  private async afterBackup(destination: BackupDestination): Promise<void> {
    for (const tombstone of await readTombstones(this.context.store)) await this.recordTombstone(tombstone);
    await this.recordForgotten(await readForgottenMarks(this.context.store));
    const backups = await destination.list();
    for (const id of backupsToRemove(backups, this.settings.keep)) await destination.remove(id);
  }

  async backups(): Promise<BackupsResponse> {
    let backups: BackupManifest[] = [];
    let destinationError: string | undefined;
    try {
      backups = this.destination === undefined ? [] : await this.destination.list();
    } catch (error) {
      destinationError = `${this.destination?.description ?? "the destination"} could not be listed: ${messageOf(error)}`;
    }
    const running = this.running?.kind === "backup" ? this.running.progress : undefined;
    return {
      configured: this.configured,
      ...(running && { running: { ...running } }),
      ...(this.lastBackupFailure && { lastFailure: this.lastBackupFailure }),
      ...(destinationError && { destinationError }),
      backups: backups.map(({ id, takenAt, completedAt, bytes, counts, embedding, files }) => {
        const attachments = files
          .map((file) => file.name)
          .filter((name) => backupAttachmentPattern.test(name));
        return {
          id,
          takenAt,
          completedAt,
          bytes,
          counts,
          embedding,
          ...(attachments.length > 0 ? { attachments } : {}),
        };
      }),
    };
  }

  /** Check the restore can go ahead (404/409 otherwise), then run it in the background. */
  async startRestore(
    backupId: string,
  ): Promise<BackupStarted & { finished: Promise<RestoreReport | undefined> }> {
    const destination = this.target();
    const startedAt = this.context.clock().toISOString();
    this.refuseWhileBusy();
    const plan = await checkRestorable(this.context, this.sources, destination, backupId);
    const progress = this.claim("restore", backupId, startedAt);
    const started = performance.now();
    const restore = async (): Promise<RestoreReport> => {
      const data = await erasureGate(this.context.store).shared("a restore", () =>
        restoreData(this.context, this.sources, destination, plan, progress),
      );
      // Both kinds of "never again" the destination keeps: erasures, then single forgets.
      progress.phase = "erasures";
      const replayed = await replayErasures(
        this.context,
        this.sources,
        plan.manifest,
        await destination.tombstones(),
        data.named,
      );
      const forgetsReplayed = await replayForgotten(
        this.context,
        this.sources,
        await destination.forgotten(),
      );
      await writeRestoreMarker(this.context.store, undefined);
      progress.phase = "done";
      return {
        backupId,
        restoredAt: this.context.clock().toISOString(),
        durationMs: Math.round(performance.now() - started),
        counts: data.counts,
        erasuresReplayed: replayed,
        forgetsReplayed,
      };
    };
    const finished = restore()
      .then(
        (report) => {
          this.lastRestore = report;
          this.lastRestoreFailure = undefined;
          return report;
        },
        (error: unknown) => {
          this.lastRestoreFailure = {
            id: backupId,
            failedAt: this.context.clock().toISOString(),
            error: messageOf(error),
          };
          return undefined;
        },
      )
      .finally(() => {
        this.running = undefined;
      });
    this.running = { kind: "restore", progress, done: finished };
    return { id: backupId, startedAt, finished };
  }

  restoreStatus(): RestoreStatus {
    const running = this.running?.kind === "restore" ? this.running.progress : undefined;
    return {
      ...(running && { running: { ...running } }),
      ...(this.lastRestoreFailure && { lastFailure: this.lastRestoreFailure }),
      ...(this.lastRestore && { last: this.lastRestore }),
    };
  }

  /** After a forget: its tombstones into the destination's copy, so a restore of an older backup forgets again. */
  recordForgotten(marks: readonly ForgottenMark[]): Promise<void> {
    if (marks.length === 0) return Promise.resolve();
    return this.oneAtATime((destination) => destination.recordForgotten(marks));
  }

  /** After an erasure: its tombstone into the destination, so a restore of an older backup replays it. */
  recordErasure(userId: string, erasedAt: string): Promise<void> {
    return this.recordTombstone({ subject: erasureSubject(userId), erasedAt });
  }

  /**
   * One tombstone write at a time: each reads the stored time, compares and writes, and two at once (an erasure's
   * and a backup's copy) could put the older time back.
   */
  private recordTombstone(tombstone: DestinationTombstone): Promise<void> {
    return this.oneAtATime((destination) => destination.recordTombstone(tombstone));
  }

  /** The destination's tombstone writes (erasures' and forgets'), one after another; none without a destination. */
  private oneAtATime(write: (destination: BackupDestination) => Promise<void>): Promise<void> {
    const destination = this.destination;
    if (destination === undefined) return Promise.resolve();
    const next = this.tombstoneWrites.then(() => write(destination));
    this.tombstoneWrites = next.catch(() => undefined);
    return next;
  }
}

function messageOf(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).slice(0, 1024);
}
