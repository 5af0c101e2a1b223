/**
 * Scheduled backups of an appliance's data: when spec.backup's cron says a backup is due and Cortex is available,
 * the operator asks Cortex for one (POST /admin/backups) and follows it in the background (GET, every few seconds,
 * requeueing the appliance as it moves), never inside a reconcile. Status carries the newest backup, the count, a
 * run's progress and the last failure; the BackedUp condition says whether the household's memory is safe. The
 * last schedule time is read back from status, so a restarted operator neither backs up again early nor forgets a
 * missed slot (one run catches up, as a CronJob with Forbid would).
 */
import type { BackupAttachment, BackupRequest, BackupStarted, BackupsResponse } from "@remram/contract";
import type { Logger } from "pino";
import type { Condition } from "../api/v1alpha1/common.js";
import {
  ApplianceReason,
  type RemramApplianceSpec,
  type RemramApplianceStatus,
} from "../api/v1alpha1/remram-appliance.js";
import { parseSchedule } from "../dream-schedule/schedule.js";
import type { ConditionInput } from "../runtime/conditions.js";

export type BackupStatus = NonNullable<RemramApplianceStatus["backup"]>;
export type BackupSpec = NonNullable<RemramApplianceSpec["backup"]>;

/** What the operator calls on the appliance's Cortex. */
export interface BackupCortex {
  startBackup(request?: BackupRequest): Promise<BackupStarted>;
  backups(): Promise<BackupsResponse>;
}

export const backupConditionType = "BackedUp";
/** How often a running backup is looked at. */
export const backupPollMs = 5_000;
/** A backup that could not start or failed is tried again this much later, until one succeeds. */
export const backupRetryMs = 30 * 60_000;
/** The listing is read again this often, so a backup taken with `kubectl remram backup` shows in status. */
export const listingRefreshMs = 10 * 60_000;
/** A due slot finds Cortex without its backup volume (spec.backup just set, the pod rolling): asked again this soon. */
const notConfiguredRetryMs = 15_000;
/** A due slot finds Cortex not answering: asked again every notConfiguredRetryMs, a failure only after this long. */
export const cortexAwayGraceMs = 5 * 60_000;

export interface BackupObservation {
  condition: ConditionInput;
  status?: BackupStatus;
  /** Reconcile again this much later (the next slot or a retry); undefined while a run is followed. */
  nextInMs?: number;
}

interface BackupState {
  running: boolean;
  /** The slot last started (ms); read from status.lastScheduleTime until this process starts one. */
  lastScheduleMs?: number;
  /** The last listing this process read, and when. */
  listing?: BackupsResponse;
  listedAtMs?: number;
  progress?: BackupsResponse["running"];
  failure?: { time: string; message: string };
  /** A slot that could not run yet (failed, or Cortex without its volume) runs then. */
  retryAtMs?: number;
  /** Since when a due slot has found Cortex not answering (its pod rolling onto the volume, a restart). */
  awaySinceMs?: number;
}

const seconds = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

/** Status from a listing: the newest complete backup, how many there are, a run's progress, the last failure. */
export function backupStatus(
  listing: BackupsResponse | undefined,
  previous: BackupStatus | undefined,
  state: Pick<BackupState, "lastScheduleMs" | "failure" | "progress">,
): BackupStatus | undefined {
  const lastScheduleTime =
    state.lastScheduleMs === undefined ? previous?.lastScheduleTime : seconds(state.lastScheduleMs);
  const newest = listing?.backups[0];
  const lastSuccessfulBackup =
    newest === undefined
      ? listing === undefined
        ? previous?.lastSuccessfulBackup
        : undefined
      : {
          id: newest.id,
          completedAt: seconds(Date.parse(newest.completedAt)),
          bytes: newest.bytes,
          knowledgeObjects: newest.counts.knowledge ?? 0,
          archivedDocuments: newest.counts.archivedDocuments ?? 0,
          commits: newest.counts.commits ?? 0,
        };
  const lastFailure = state.failure ?? previous?.lastFailure;
  const running = state.progress;
  if (lastScheduleTime === undefined && listing === undefined && previous === undefined && !lastFailure)
    return undefined;
  return {
    ...(lastScheduleTime ? { lastScheduleTime } : {}),
    ...(lastSuccessfulBackup ? { lastSuccessfulBackup } : {}),
    backups: listing?.backups.length ?? previous?.backups ?? 0,
    ...(running
      ? { running: { id: running.id, phase: running.phase, documentsDone: running.documentsDone } }
      : {}),
    ...(lastFailure ? { lastFailure } : {}),
  };
}

export function backupCondition(
  spec: BackupSpec | undefined,
  status: BackupStatus | undefined,
): ConditionInput {
  const condition = (status: ConditionInput["status"], reason: string, message: string): ConditionInput => ({
    type: backupConditionType,
    status,
    reason,
    message: message.slice(0, 1024),
  });
  if (spec === undefined)
    return condition(
      "False",
      ApplianceReason.BackupsNotConfigured,
      "spec.backup is not set: the household's memory is not backed up (name a volume claim in spec.backup.volume)",
    );
  const success = status?.lastSuccessfulBackup;
  const failure = status?.lastFailure;
  if (failure && (success === undefined || Date.parse(failure.time) > Date.parse(success.completedAt)))
    return condition(
      "False",
      ApplianceReason.BackupFailed,
      `the last backup failed at ${failure.time}: ${failure.message}`,
    );
  if (success)
    return condition(
      "True",
      ApplianceReason.BackupSucceeded,
      `${success.id} completed at ${success.completedAt}: ${success.knowledgeObjects} knowledge objects, ${success.archivedDocuments} archived documents, ${success.commits} commits, ${success.bytes} bytes; ${status?.backups ?? 0} kept`,
    );
  return condition(
    "Unknown",
    ApplianceReason.NoBackupYet,
    status?.running
      ? `the first backup is running (${status.running.phase})`
      : `no backup yet; the first runs on schedule "${spec.schedule}"`,
  );
}

/**
 * A failed slot held in status (a new leader, a restart): retried half an hour after the failure, not at the next
 * slot.
 */
function retryFromStatus(previous: BackupStatus | undefined): Pick<BackupState, "retryAtMs"> {
  const failure = previous?.lastFailure;
  const success = previous?.lastSuccessfulBackup;
  if (failure === undefined) return {};
  if (success !== undefined && Date.parse(success.completedAt) >= Date.parse(failure.time)) return {};
  return { retryAtMs: Date.parse(failure.time) + backupRetryMs };
}

function heldCondition(conditions: readonly Condition[] | undefined): ConditionInput | undefined {
  const held = conditions?.find((condition) => condition.type === backupConditionType);
  return held && { type: held.type, status: held.status, reason: held.reason, message: held.message };
}

export class ScheduledBackups {
  private readonly states = new Map<string, BackupState>();

  constructor(
    private readonly options: {
      cortexFor: (namespace: string, name: string) => Promise<BackupCortex>;
      /** Files each scheduled backup of the appliance carries (its Secrets, sealed: secrets-bundle.ts). */
      attachmentsFor?: (namespace: string, name: string) => Promise<BackupAttachment[]>;
      ignoreDeployment?: boolean;
      now: () => number;
      sleep?: (ms: number) => Promise<void>;
      /** Called with the appliance's key when a followed backup moves or ends (requeue it). */
      settled: (key: string) => void;
      log: Logger;
    },
  ) {}

  observe(
    namespace: string,
    name: string,
    spec: BackupSpec | undefined,
    appliance: Pick<RemramApplianceStatus, "backup" | "conditions"> | undefined,
    cortexAvailable: boolean,
    /** When the appliance was created: the first slot is the first one after it. */
    createdMs: number,
  ): BackupObservation {
    const key = `${namespace}/${name}`;
    if (spec === undefined) {
      this.states.delete(key);
      return { condition: backupCondition(undefined, undefined) };
    }
    const previous = appliance?.backup;
    const state = this.states.get(key) ?? { running: false, ...retryFromStatus(previous) };
    this.states.set(key, state);
    const now = this.options.now();
    const reachable = cortexAvailable || this.options.ignoreDeployment === true;
    const lastSlotMs =
      state.lastScheduleMs ??
      (previous?.lastScheduleTime === undefined ? createdMs : Date.parse(previous.lastScheduleTime));
    const nextSlotMs = parseSchedule(spec.schedule, spec.timeZone).nextRun(new Date(lastSlotMs))?.getTime();
    // A failed slot is retried before the next one comes.
    const dueAtMs = state.retryAtMs ?? nextSlotMs ?? Number.POSITIVE_INFINITY;
    const listAtMs = state.listedAtMs === undefined ? now : state.listedAtMs + listingRefreshMs;
    if (!state.running && reachable && (dueAtMs <= now || listAtMs <= now))
      this.start(key, namespace, name, state, dueAtMs <= now ? now : undefined);
    const status = backupStatus(state.listing, previous, state);
    // Nothing learnt in this process yet (a new leader, a restart): what status says stands until it is.
    const condition =
      state.listing === undefined && state.failure === undefined && heldCondition(appliance?.conditions)
        ? (heldCondition(appliance?.conditions) as ConditionInput)
        : backupCondition(spec, status);
    const observation: BackupObservation = { condition, ...(status ? { status } : {}) };
    if (!state.running && reachable)
      observation.nextInMs = Math.max(1_000, Math.min(dueAtMs, listAtMs) - now);
    return observation;
  }

  forget(namespace: string, name: string): void {
    this.states.delete(`${namespace}/${name}`);
  }

  /** A run: start a backup when `slotMs` is given (else only read the listing), then follow it to its end. */
  private async attachments(namespace: string, name: string): Promise<BackupAttachment[]> {
    try {
      return (await this.options.attachmentsFor?.(namespace, name)) ?? [];
    } catch (error) {
      throw new Error(
        `the appliance's Secrets could not be sealed for the backup: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }

  private start(
    key: string,
    namespace: string,
    name: string,
    state: BackupState,
    slotMs: number | undefined,
  ): void {
    state.running = true;
    const sleep = this.options.sleep ?? ((ms: number) => new Promise((resolve) => setTimeout(resolve, ms)));
    const run = async () => {
      const cortex = await this.options.cortexFor(namespace, name);
      let id: string | undefined;
      if (slotMs !== undefined) {
        const now = this.options.now();
        let first: BackupsResponse;
        try {
          first = await cortex.backups();
        } catch (error) {
          // Most often the pod rolling onto spec.backup's volume as the slot comes: not a failed backup yet.
          const since = state.awaySinceMs ?? now;
          if (now - since >= cortexAwayGraceMs) throw error;
          state.awaySinceMs = since;
          state.retryAtMs = now + notConfiguredRetryMs;
          return;
        }
        delete state.awaySinceMs;
        if (first.destinationError !== undefined) throw new Error(first.destinationError);
        if (!first.configured) {
          // Cortex has not rolled onto spec.backup's volume yet: the slot waits for the new pod, no failure.
          state.listing = first;
          state.listedAtMs = this.options.now();
          state.retryAtMs = this.options.now() + notConfiguredRetryMs;
          return;
        }
        state.lastScheduleMs = slotMs;
        // One taken with `kubectl remram backup` is running: this slot follows it instead of starting another.
        const running = first.running;
        id =
          running?.id ??
          (await cortex.startBackup({ attachments: await this.attachments(namespace, name) })).id;
        this.options.log.info(
          { key, backupId: id },
          running ? "following a running backup" : "backup started",
        );
      }
      for (;;) {
        const listing = await cortex.backups();
        // An unreadable destination (a disk unplugged, a bucket refusing the key) says nothing about what it
        // holds: status keeps what it knew, and a slot counts as failed.
        if (listing.destinationError !== undefined) throw new Error(listing.destinationError);
        state.listing = listing;
        state.listedAtMs = this.options.now();
        state.progress = listing.running;
        if (listing.running === undefined) break;
        this.options.settled(key);
        await sleep(backupPollMs);
      }
      if (id === undefined) return;
      const failed = state.listing?.lastFailure;
      if (failed?.id === id) throw new Error(failed.error);
      if (!state.listing?.backups.some((backup) => backup.id === id))
        throw new Error(`backup ${id} ended without completing (did Cortex restart?)`);
      delete state.failure;
      delete state.retryAtMs;
      this.options.log.info({ key, backupId: id }, "backup complete");
    };
    run()
      .catch((error: unknown) => {
        delete state.progress;
        if (slotMs === undefined) {
          // Only the listing could not be read (Cortex restarting): read it again in a minute; no backup failed.
          state.listedAtMs = this.options.now() - listingRefreshMs + 60_000;
          return;
        }
        state.failure = {
          time: seconds(this.options.now()),
          message: (error instanceof Error ? error.message : String(error)).slice(0, 1024),
        };
        state.retryAtMs = this.options.now() + backupRetryMs;
        this.options.log.warn({ key, err: error }, "backup failed");
      })
      .finally(() => {
        state.running = false;
        if (this.states.get(key) === state) this.options.settled(key);
      });
  }
}
