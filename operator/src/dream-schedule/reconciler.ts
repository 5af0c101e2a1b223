/**
 * DreamSchedule, the one owner of dream scheduling: decide from cron + timeZone + lastScheduleTime, start the
 * Cortex /dream call in the background (a cycle can take minutes; a worker must not wait on it), record the
 * outcome and report counts, then mirror Cortex's pending proposals as ArtifactProposal objects.
 */
import { artifactProposalObjectName } from "@remram/contract";
import type { Logger } from "pino";
import {
  DreamScheduleReason,
  type DreamScheduleStatus,
  dreamScheduleSpec,
} from "../api/v1alpha1/dream-schedule.js";
import type { DreamReport, PendingProposal } from "../cortex/client.js";
import type { CortexDirectory } from "../cortex/directory.js";
import type { Cache } from "../runtime/cache.js";
import { type ConditionInput, mergeConditions, transitions } from "../runtime/conditions.js";
import type { ReconcileResult } from "../runtime/controller.js";
import type { EventRecorder } from "../runtime/events.js";
import { type KubeClient, type KubeObject, resourcePath } from "../runtime/kube-client.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import { splitKey } from "../runtime/owner.js";
import { applyStatusIfChanged, conditionTime } from "../runtime/status-writer.js";
import { parseSpec } from "../runtime/terminal-error.js";
import { dreamRequestAnnotation } from "./request-annotation.js";
import { decideRun, InvalidScheduleError } from "./schedule.js";

export interface DreamScheduleObject extends KubeObject {
  spec?: unknown;
  status?: DreamScheduleStatus;
}

interface RunState {
  startedAtMs: number;
  scheduledMs: number;
  result?: { report?: DreamReport; error?: string; finishedAtMs: number; mirrored?: number };
}

export interface DreamScheduleDeps {
  client: KubeClient;
  schedules: Cache<DreamScheduleObject>;
  proposals: Cache<KubeObject>;
  cortex: CortexDirectory;
  events: EventRecorder;
  metrics?: OperatorMetrics;
  /** The operator's own username: ArtifactProposals it creates name it as proposer (the VAP checks this). */
  operatorUsername: () => string;
  now: () => number;
  enqueue: (key: string) => void;
  log: Logger;
  /**
   * How often pending proposals are mirrored between cycles: an explicit save ("remember that …") proposes its page
   * at once, outside any cycle, and the person is told it waits for approval. Default 10 s.
   */
  mirrorIntervalMs?: number;
}

export const defaultMirrorIntervalMs = 10_000;

const iso = conditionTime;

/**
 * ArtifactProposal name for a Cortex proposal: DNS-safe, stable, unique per appliance. The rule lives in the
 * contract, so the hooks name the same object when they tell a person what to approve.
 */
export const proposalObjectName = artifactProposalObjectName;

export class DreamScheduleReconciler {
  /** Cycles this process started, by schedule key. Lost on restart; status then reports the run as interrupted. */
  private readonly runs = new Map<string, RunState>();
  /**
   * The start of the last run each schedule recorded the outcome of. A cycle can finish before the cache shows the
   * status that said it runs; a reconcile reading that stale "Running" must not take it for a cycle a restart cut off.
   */
  private readonly recorded = new Map<string, string>();
  /** One mirror at a time per appliance: two schedules of one appliance, or a cycle's and a periodic one. */
  private readonly mirrorTails = new Map<string, Promise<unknown>>();

  constructor(private readonly deps: DreamScheduleDeps) {}

  async reconcile(key: string): Promise<ReconcileResult | undefined> {
    const { namespace, name } = splitKey(key);
    const schedule = this.deps.schedules.get(namespace, name);
    if (schedule === undefined) {
      this.runs.delete(key);
      this.recorded.delete(key);
      return undefined;
    }
    const spec = parseSpec(dreamScheduleSpec, schedule.spec);
    const generation = schedule.metadata.generation ?? 1;
    const nowMs = this.deps.now();
    const previous = schedule.status ?? {};
    const status: DreamScheduleStatus = { ...previous, observedGeneration: generation };
    const run = this.runs.get(key);
    // The cache still shows a cycle this process has already recorded the end of: acting on it would write the old
    // status back. Look again once the cache has caught up.
    if (
      run === undefined &&
      previous.lastRun?.outcome === "Running" &&
      this.recorded.get(key) === previous.lastRun.startedAt
    )
      return { requeueAfterMs: 1_000 };
    const conditions: ConditionInput[] = [];
    let requeueAfterMs: number | undefined;

    if (run?.result !== undefined) {
      this.runs.delete(key);
      this.recorded.set(key, iso(run.startedAtMs));
      const succeeded = run.result.error === undefined;
      // Also when the cache does not show the status that started the run yet: its schedule time is this run's.
      const scheduled = iso(run.scheduledMs);
      if ((previous.lastScheduleTime ?? "") < scheduled) status.lastScheduleTime = scheduled;
      status.lastRun = {
        startedAt: iso(run.startedAtMs),
        finishedAt: iso(run.result.finishedAtMs),
        outcome: succeeded ? "Succeeded" : "Failed",
        ...(run.result.error ? { message: run.result.error.slice(0, 1024) } : {}),
        ...(run.result.report ? { counts: boundedCounts(run.result.report.counts) } : {}),
        ...(run.result.mirrored !== undefined ? { mirroredProposals: run.result.mirrored } : {}),
      };
      if (succeeded) status.lastSuccessfulTime = iso(run.result.finishedAtMs);
      this.deps.metrics?.dreamRuns.inc({ outcome: succeeded ? "succeeded" : "failed" });
    } else if (run === undefined && previous.lastRun?.outcome === "Running") {
      status.lastRun = {
        ...previous.lastRun,
        outcome: "Failed",
        message: "interrupted: the operator restarted during the cycle",
        finishedAt: iso(nowMs),
      };
    }

    try {
      const decision = decideRun({
        schedule: spec.schedule,
        timeZone: spec.timeZone,
        suspend: spec.suspend,
        concurrencyPolicy: spec.concurrencyPolicy,
        ...(spec.startingDeadlineSeconds !== undefined
          ? { startingDeadlineSeconds: spec.startingDeadlineSeconds }
          : {}),
        // status, not previous: a run recorded above has set it even where the cache lags behind.
        lastScheduleMs: Date.parse(
          status.lastScheduleTime ?? schedule.metadata.creationTimestamp ?? iso(nowMs),
        ),
        nowMs,
        running: this.runs.has(key),
        ...requestedAt(schedule),
        ...(status.lastScheduleTime ? { lastRunMs: Date.parse(status.lastScheduleTime) } : {}),
      });
      if (decision.nextMs !== undefined) {
        status.nextScheduleTime = iso(decision.nextMs);
        // Look again at least hourly: clock jumps and edits are noticed, and timers stay far below Node's 24.8-day cap.
        requeueAfterMs = Math.min(Math.max(1_000, decision.nextMs - nowMs), 3_600_000);
      } else {
        delete status.nextScheduleTime;
      }
      if (decision.action === "run") {
        status.lastScheduleTime = iso(decision.scheduledMs);
        status.lastRun = { startedAt: iso(nowMs), outcome: "Running" };
        this.start(key, namespace, spec, decision.scheduledMs, nowMs);
      } else if (decision.action === "skip") {
        this.deps.metrics?.dreamRuns.inc({ outcome: "skipped" });
        status.lastScheduleTime = iso(decision.scheduledMs);
        status.lastRun = {
          startedAt: iso(nowMs),
          finishedAt: iso(nowMs),
          outcome: "Skipped",
          message: decision.reason,
        };
        await this.deps.events.record(schedule, {
          type: "Warning",
          reason: decision.reason,
          action: "ScheduleDream",
          note: `skipped the run scheduled for ${iso(decision.scheduledMs)}`,
        });
      }
      conditions.push(
        spec.suspend
          ? { type: "Ready", status: "True", reason: DreamScheduleReason.Suspended, message: "suspended" }
          : {
              type: "Ready",
              status: "True",
              reason: DreamScheduleReason.Scheduled,
              message: `next run ${status.nextScheduleTime ?? "never"}`,
            },
      );
    } catch (error) {
      if (!(error instanceof InvalidScheduleError)) throw error;
      conditions.push({
        type: "Ready",
        status: "False",
        reason: DreamScheduleReason.InvalidSchedule,
        message: error.message.slice(0, 1024),
      });
    }
    const running = this.runs.has(key);
    // Level-triggered: every reconcile brings the mirror in line with Cortex's pending proposals, so one an explicit
    // save made outside a cycle appears within the interval. Not while this schedule's cycle runs: its own mirror
    // follows the cycle and counts what it created.
    if (spec.cycle.mirrorProposals && !spec.cycle.dryRun) {
      const interval = this.deps.mirrorIntervalMs ?? defaultMirrorIntervalMs;
      requeueAfterMs = Math.min(requeueAfterMs ?? interval, interval);
      if (!running) await this.syncMirror(namespace, spec.applianceRef.name);
    }
    conditions.push(
      running
        ? {
            type: "Running",
            status: "True",
            reason: DreamScheduleReason.DreamCycleRunning,
            message: "a dream cycle is running",
          }
        : {
            type: "Running",
            status: "False",
            reason: DreamScheduleReason.Idle,
            message: "no dream cycle is running",
          },
    );
    status.conditions = mergeConditions(previous.conditions, conditions, generation, iso(nowMs));
    await applyStatusIfChanged(this.deps.client, schedule, status);
    for (const changed of transitions(previous.conditions, status.conditions)) {
      if (changed.type === "Ready" && changed.status === "False") {
        await this.deps.events.record(schedule, {
          type: "Warning",
          reason: changed.reason,
          action: "ScheduleDream",
          note: changed.message,
        });
      }
    }
    return requeueAfterMs === undefined ? undefined : { requeueAfterMs };
  }

  private start(
    key: string,
    namespace: string,
    spec: ReturnType<typeof dreamScheduleSpec.parse>,
    scheduledMs: number,
    nowMs: number,
  ): void {
    const state: RunState = { startedAtMs: nowMs, scheduledMs };
    this.runs.set(key, state);
    const finish = (result: Omit<NonNullable<RunState["result"]>, "finishedAtMs">): void => {
      state.result = { ...result, finishedAtMs: this.deps.now() };
      this.deps.enqueue(key);
    };
    void (async () => {
      try {
        const cortex = await this.deps.cortex.clientFor(namespace, spec.applianceRef.name);
        const report = await cortex.dream({
          dryRun: spec.cycle.dryRun,
          maxProposals: spec.cycle.maxProposals,
        });
        const mirrored =
          spec.cycle.mirrorProposals && !spec.cycle.dryRun
            ? await this.mirror(
                namespace,
                spec.applianceRef.name,
                () => cortex.pendingProposals(),
                () => cortex.heldProposalIds(),
              )
            : undefined;
        finish({ report, ...(mirrored !== undefined ? { mirrored } : {}) });
      } catch (error) {
        finish({ error: error instanceof Error ? error.message : String(error) });
      }
    })();
  }

  /** The periodic mirror: Cortex unreachable is logged and retried at the next interval, never a failed reconcile. */
  private async syncMirror(namespace: string, appliance: string): Promise<void> {
    try {
      const cortex = await this.deps.cortex.clientFor(namespace, appliance);
      const created = await this.mirror(namespace, appliance, () => cortex.pendingProposals());
      if (created > 0) this.deps.log.info({ namespace, appliance, created }, "mirrored pending proposals");
    } catch (error) {
      this.deps.log.warn(
        { namespace, appliance, err: error instanceof Error ? error.message : String(error) },
        "could not mirror pending proposals; trying again at the next interval",
      );
    }
  }

  /**
   * Mirror one appliance's proposals after any mirror of it still in flight. The list is read inside that turn: a
   * list read before another mirror ran could be older than what that one created, and would delete it again.
   */
  mirror(
    namespace: string,
    appliance: string,
    pending: () => Promise<readonly PendingProposal[]>,
    held?: () => Promise<ReadonlySet<string>>,
  ): Promise<number> {
    const key = `${namespace}/${appliance}`;
    const previous = this.mirrorTails.get(key) ?? Promise.resolve();
    const work = async () => this.mirrorNow(namespace, appliance, await pending(), await held?.());
    const run = previous.then(work, work);
    const tail = run.catch(() => undefined);
    this.mirrorTails.set(key, tail);
    void tail.then(() => {
      if (this.mirrorTails.get(key) === tail) this.mirrorTails.delete(key);
    });
    return run;
  }

  /**
   * One ArtifactProposal per pending Cortex proposal; existing ones are left alone (their spec is immutable). One
   * nobody has decided on yet whose proposal Cortex no longer holds as pending (superseded by a later cycle, or
   * deleted by an erasure, whose text its diff may quote) is deleted. With `held` (every proposal id Cortex holds,
   * read after a dream cycle), a decided one whose proposal Cortex no longer holds at all goes too: an erasure
   * deletes the proposals naming what it erased, and the decided mirror's diff would keep quoting it.
   */
  private async mirrorNow(
    namespace: string,
    appliance: string,
    proposals: readonly PendingProposal[],
    held?: ReadonlySet<string>,
  ): Promise<number> {
    const pending = new Set(proposals.map((proposal) => proposal.id));
    for (const object of this.deps.proposals.list(namespace)) {
      const mirrored = object as KubeObject & {
        spec?: { proposalId?: string };
        status?: { approval?: unknown };
      };
      if (mirrored.metadata.labels?.["remram.io/appliance"] !== appliance) continue;
      if (mirrored.spec?.proposalId === undefined) continue;
      const decided = mirrored.status?.approval !== undefined;
      if (
        decided
          ? held === undefined || held.has(mirrored.spec.proposalId)
          : pending.has(mirrored.spec.proposalId)
      )
        continue;
      await this.deps.client.delete(
        resourcePath("remram.io/v1alpha1", "ArtifactProposal", namespace, mirrored.metadata.name),
      );
    }
    let created = 0;
    for (const proposal of proposals) {
      const name = proposalObjectName(appliance, proposal.id);
      if (this.deps.proposals.get(namespace, name) !== undefined) continue;
      const body = {
        apiVersion: "remram.io/v1alpha1",
        kind: "ArtifactProposal",
        metadata: {
          name,
          namespace,
          labels: { "app.kubernetes.io/part-of": "remram", "remram.io/appliance": appliance },
        },
        spec: {
          applianceRef: { name: appliance },
          proposalId: proposal.id,
          artifactPath: proposal.artifactPath,
          ...(proposal.baseDigest ? { baseDigest: proposal.baseDigest } : {}),
          proposedDigest: proposal.proposedDigest,
          diff: proposal.diff.slice(0, 65536),
          rationale: proposal.rationale.slice(0, 4096) || "proposed by dream",
          sourceKnowledgeIds: [...new Set(proposal.sourceKnowledgeIds)].slice(0, 64),
          proposedBy: this.deps.operatorUsername(),
        },
      };
      try {
        await this.deps.client.create(
          resourcePath("remram.io/v1alpha1", "ArtifactProposal", namespace),
          body,
        );
        created++;
      } catch (error) {
        if (!(error instanceof Error && "status" in error && error.status === 409)) throw error;
      }
    }
    return created;
  }
}

function requestedAt(schedule: DreamScheduleObject): { requestedMs?: number } {
  const value = Date.parse(schedule.metadata.annotations?.[dreamRequestAnnotation] ?? "");
  return Number.isNaN(value) ? {} : { requestedMs: value };
}

function boundedCounts(counts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(
    Object.entries(counts)
      .filter(
        ([name, value]) => /^[a-zA-Z][a-zA-Z0-9]{0,62}$/.test(name) && Number.isInteger(value) && value >= 0,
      )
      .slice(0, 32),
  );
}
