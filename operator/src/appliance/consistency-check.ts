/**
 * The periodic consistency check of an appliance's data: the operator asks Cortex (POST /admin/check) once per
 * interval while Cortex is available and reports the outcome as status.consistency and the DataConsistent
 * condition. A check reads every store and may take minutes on a large household, so it never runs inside a
 * reconcile: it starts in the background and requeues the appliance when it settles. The last outcome is read
 * back from status after an operator restart, so a restart neither loses it nor checks again early.
 */
import type { ConsistencyReport } from "@remram/contract";
import type { Logger } from "pino";
import type { Condition } from "../api/v1alpha1/common.js";
import { ApplianceReason, type RemramApplianceStatus } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";

export type ConsistencyStatus = NonNullable<RemramApplianceStatus["consistency"]>;
export type RunConsistencyCheck = (namespace: string, name: string) => Promise<ConsistencyReport>;

export const conditionType = "DataConsistent";
/** A failed attempt (Cortex restarting, an erasure running) is tried again this much later. */
export const retryAfterFailureMs = 60_000;
const examplesKept = 5;

export interface ConsistencyObservation {
  condition: ConditionInput;
  /** The last check's outcome (absent until one has finished). */
  status?: ConsistencyStatus;
  /** Reconcile again this much later for the next check; undefined while one runs (it requeues when done). */
  nextInMs?: number;
}

interface CheckState {
  running: boolean;
  lastAttemptMs?: number;
  report?: ConsistencyReport;
  failure?: string;
}

/** What status keeps of a report: counts, and a few findings by id (the whole list is one `kubectl remram check`). */
export function consistencyStatus(report: ConsistencyReport): ConsistencyStatus {
  const byKind = Object.entries(report.byKind)
    .map(([kind, count]) => ({ kind, count: count ?? 0 }))
    .filter((entry) => entry.count > 0)
    .sort((a, b) => a.kind.localeCompare(b.kind));
  const findings = byKind.reduce((sum, entry) => sum + entry.count, 0);
  return {
    lastCheckTime: new Date(Math.floor(Date.parse(report.checkedAt) / 1000) * 1000)
      .toISOString()
      .replace(".000Z", "Z"),
    consistent: report.consistent,
    findings,
    ...(byKind.length > 0 ? { byKind } : {}),
    ...(report.findings.length > 0
      ? {
          examples: report.findings
            .slice(0, examplesKept)
            .map((finding) => `${finding.kind} ${finding.id}: ${finding.detail}`.slice(0, 300)),
        }
      : {}),
    durationMs: report.durationMs,
    knowledgeObjects: report.counts.knowledge,
    archivedDocuments: report.counts.archivedDocuments,
    commits: report.counts.commits,
  };
}

export function consistencyCondition(
  status: ConsistencyStatus | undefined,
  failure: string | undefined,
): ConditionInput {
  if (status === undefined) {
    return failure === undefined
      ? {
          type: conditionType,
          status: "Unknown",
          reason: ApplianceReason.NotCheckedYet,
          message: "the first consistency check runs once Cortex is available",
        }
      : {
          type: conditionType,
          status: "Unknown",
          reason: ApplianceReason.CheckFailed,
          message: `the consistency check could not run: ${failure}`.slice(0, 1024),
        };
  }
  const checked = `${status.knowledgeObjects} knowledge objects, ${status.archivedDocuments} archived documents, ${status.commits} commits`;
  if (status.consistent) {
    return {
      type: conditionType,
      status: "True",
      reason: ApplianceReason.ChecksPassed,
      message: `checked at ${status.lastCheckTime}: ${checked}; nothing wrong`,
    };
  }
  const kinds = (status.byKind ?? []).map((entry) => `${entry.count} ${entry.kind}`).join(", ");
  return {
    type: conditionType,
    status: "False",
    reason: ApplianceReason.FindingsReported,
    message:
      `checked at ${status.lastCheckTime}: ${status.findings} findings (${kinds}); first: ${status.examples?.[0] ?? ""}`.slice(
        0,
        1024,
      ),
  };
}

/** The DataConsistent condition status holds, as an input (without its times and generation). */
function heldCondition(conditions: readonly Condition[] | undefined): ConditionInput | undefined {
  const held = conditions?.find((condition) => condition.type === conditionType);
  return held && { type: held.type, status: held.status, reason: held.reason, message: held.message };
}

export class ConsistencyChecks {
  private readonly checks = new Map<string, CheckState>();

  constructor(
    private readonly options: {
      run: RunConsistencyCheck;
      intervalMs: number;
      /**
       * Check whether or not the appliance's Cortex Deployment is available: for an operator that reaches Cortex
       * elsewhere (the lab's out-of-cluster URL), whose availability the Deployment does not tell.
       */
      ignoreDeployment?: boolean;
      now: () => number;
      /** Called with the appliance's key when a check settles (requeue it). */
      settled: (key: string) => void;
      log: Logger;
    },
  ) {}

  /**
   * The last outcome, and a check started now when one is due: never checked (or not since `previous`) for an
   * interval, Cortex available, none running, no failed attempt in the last minute.
   */
  observe(
    namespace: string,
    name: string,
    appliance: Pick<RemramApplianceStatus, "consistency" | "conditions"> | undefined,
    cortexAvailable: boolean,
  ): ConsistencyObservation {
    const previous = { status: appliance?.consistency, condition: heldCondition(appliance?.conditions) };
    const key = `${namespace}/${name}`;
    const reachable = cortexAvailable || this.options.ignoreDeployment === true;
    const state = this.checks.get(key) ?? { running: false };
    this.checks.set(key, state);
    const now = this.options.now();
    const status = state.report === undefined ? previous.status : consistencyStatus(state.report);
    const lastCheckMs = status === undefined ? undefined : Date.parse(status.lastCheckTime);
    const dueInMs = lastCheckMs === undefined ? 0 : lastCheckMs + this.options.intervalMs - now;
    const retryInMs =
      state.failure === undefined || state.lastAttemptMs === undefined
        ? 0
        : state.lastAttemptMs + retryAfterFailureMs - now;
    const waitMs = Math.max(dueInMs, retryInMs);
    if (!state.running && reachable && waitMs <= 0) this.start(key, namespace, name, state, now);
    // Nothing learnt in this process yet (a new leader, a restart): what status says stands until it is.
    const condition =
      status === undefined && state.failure === undefined && previous.condition !== undefined
        ? previous.condition
        : consistencyCondition(status, state.failure);
    const observation: ConsistencyObservation = { condition, ...(status ? { status } : {}) };
    if (!state.running && reachable) observation.nextInMs = Math.max(1_000, waitMs);
    return observation;
  }

  /** The appliance is gone: drop what was kept of it. */
  forget(namespace: string, name: string): void {
    this.checks.delete(`${namespace}/${name}`);
  }

  private start(key: string, namespace: string, name: string, state: CheckState, now: number): void {
    state.running = true;
    state.lastAttemptMs = now;
    this.options
      .run(namespace, name)
      .then(
        (report) => {
          state.report = report;
          delete state.failure;
          const log = this.options.log;
          const fields = { key, byKind: report.byKind, durationMs: report.durationMs };
          if (report.consistent) log.info(fields, "consistency check found nothing wrong");
          else log.warn(fields, "consistency check reported findings");
        },
        (error: unknown) => {
          state.failure = (error instanceof Error ? error.message : String(error)).slice(0, 512);
          this.options.log.warn({ key, err: error }, "consistency check failed");
        },
      )
      .finally(() => {
        state.running = false;
        // Requeued only while still tracked: a forgotten (deleted) appliance is not brought back.
        if (this.checks.get(key) === state) this.options.settled(key);
      });
  }
}
