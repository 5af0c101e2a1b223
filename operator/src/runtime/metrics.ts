/**
 * Prometheus metrics under controller-runtime's names, so its dashboards and alerts apply unchanged, plus
 * remram_* domain metrics. One registry per operator process (tests make their own).
 */
import { Counter, Gauge, Histogram, Registry } from "prom-client";
import type { QueueObserver } from "./workqueue.js";

export class OperatorMetrics {
  readonly registry = new Registry();
  readonly reconcileTotal = new Counter({
    name: "controller_runtime_reconcile_total",
    help: "Total number of reconciliations per controller",
    labelNames: ["controller", "result"] as const,
    registers: [this.registry],
  });
  readonly reconcileErrors = new Counter({
    name: "controller_runtime_reconcile_errors_total",
    help: "Total number of reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly terminalReconcileErrors = new Counter({
    name: "controller_runtime_terminal_reconcile_errors_total",
    help: "Total number of terminal reconciliation errors per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly reconcileTime = new Histogram({
    name: "controller_runtime_reconcile_time_seconds",
    help: "Length of time per reconciliation per controller",
    labelNames: ["controller"] as const,
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [this.registry],
  });
  readonly maxConcurrentReconciles = new Gauge({
    name: "controller_runtime_max_concurrent_reconciles",
    help: "Maximum number of concurrent reconciles per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly activeWorkers = new Gauge({
    name: "controller_runtime_active_workers",
    help: "Number of currently used workers per controller",
    labelNames: ["controller"] as const,
    registers: [this.registry],
  });
  readonly queueDepth = new Gauge({
    name: "workqueue_depth",
    help: "Current depth of workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly queueAdds = new Counter({
    name: "workqueue_adds_total",
    help: "Total number of adds handled by workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly queueRetries = new Counter({
    name: "workqueue_retries_total",
    help: "Total number of retries handled by workqueue",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly queueDuration = new Histogram({
    name: "workqueue_queue_duration_seconds",
    help: "How long in seconds an item stays in workqueue before being requested",
    labelNames: ["name"] as const,
    buckets: [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100, 1000],
    registers: [this.registry],
  });
  readonly workDuration = new Histogram({
    name: "workqueue_work_duration_seconds",
    help: "How long in seconds processing an item from workqueue takes",
    labelNames: ["name"] as const,
    buckets: [1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 0.1, 1, 10, 100, 1000],
    registers: [this.registry],
  });
  readonly unfinishedWork = new Gauge({
    name: "workqueue_unfinished_work_seconds",
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly longestRunning = new Gauge({
    name: "workqueue_longest_running_processor_seconds",
    help: "How many seconds has the longest running processor for workqueue been running",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly restRequests = new Counter({
    name: "rest_client_requests_total",
    help: "Number of HTTP requests, partitioned by status code, method, and host",
    labelNames: ["code", "method", "host"] as const,
    registers: [this.registry],
  });
  readonly leaderStatus = new Gauge({
    name: "leader_election_master_status",
    help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master",
    labelNames: ["name"] as const,
    registers: [this.registry],
  });
  readonly informerRestarts = new Counter({
    name: "remram_informer_restarts_total",
    help: "Watch restarts after errors other than 410, per resource",
    labelNames: ["resource"] as const,
    registers: [this.registry],
  });
  readonly dreamRuns = new Counter({
    name: "remram_dream_runs_total",
    help: "Dream cycles started by DreamSchedules, by outcome",
    labelNames: ["outcome"] as const,
    registers: [this.registry],
  });
  readonly proposalsPromoted = new Counter({
    name: "remram_proposals_promoted_total",
    help: "ArtifactProposals promoted into the workspace repository",
    registers: [this.registry],
  });
  private readonly conditionTypes = new Map<string, string[]>();
  readonly applianceCondition = new Gauge({
    name: "remram_appliance_condition",
    help: "1 when the appliance's condition of this type is True, else 0",
    labelNames: ["namespace", "appliance", "type"] as const,
    registers: [this.registry],
  });
  readonly backupDestinationMissing = new Gauge({
    name: "remram_appliance_backup_destination_missing",
    help: "1 while spec.backup names a claim or Secret that is not there (Cortex runs without backups), else 0",
    labelNames: ["namespace", "appliance"] as const,
    registers: [this.registry],
  });
  readonly consistencyFindings = new Gauge({
    name: "remram_appliance_consistency_findings",
    help: "Findings of the appliance's last consistency check (0: nothing wrong)",
    labelNames: ["namespace", "appliance"] as const,
    registers: [this.registry],
  });
  readonly consistencyLastCheck = new Gauge({
    name: "remram_appliance_consistency_last_check_timestamp_seconds",
    help: "When the appliance's last consistency check ran",
    labelNames: ["namespace", "appliance"] as const,
    registers: [this.registry],
  });
  readonly proposalPendingSince = new Gauge({
    name: "remram_proposal_pending_since_timestamp_seconds",
    help: "Creation time of each ArtifactProposal still waiting for a decision",
    labelNames: ["namespace", "proposal"] as const,
    registers: [this.registry],
  });

  /** The last consistency check's outcome from status; `undefined` (deleted or never checked) drops the series. */
  setApplianceConsistency(
    namespace: string,
    appliance: string,
    consistency: { findings: number; lastCheckTime: string } | undefined,
  ): void {
    const labels = { namespace, appliance };
    if (consistency === undefined) {
      this.consistencyFindings.remove(labels);
      this.consistencyLastCheck.remove(labels);
      return;
    }
    this.consistencyFindings.set(labels, consistency.findings);
    this.consistencyLastCheck.set(labels, Date.parse(consistency.lastCheckTime) / 1000);
  }

  /** The appliance's conditions as gauges; `undefined` (deleted) drops its series. */
  setApplianceConditions(
    namespace: string,
    appliance: string,
    conditions: readonly { type: string; status: string; reason?: string }[] | undefined,
  ): void {
    const key = `${namespace}/${appliance}`;
    for (const type of this.conditionTypes.get(key) ?? [])
      this.applianceCondition.remove({ namespace, appliance, type });
    this.conditionTypes.delete(key);
    this.backupDestinationMissing.remove({ namespace, appliance });
    if (conditions === undefined) return;
    // Cortex without a destination exports no backup gauges, so RemramBackupStale cannot see this case.
    const backedUp = conditions.find((condition) => condition.type === "BackedUp");
    if (backedUp !== undefined)
      this.backupDestinationMissing.set(
        { namespace, appliance },
        backedUp.reason === "BackupDestinationMissing" ? 1 : 0,
      );
    for (const condition of conditions) {
      this.applianceCondition.set(
        { namespace, appliance, type: condition.type },
        condition.status === "True" ? 1 : 0,
      );
    }
    this.conditionTypes.set(
      key,
      conditions.map((condition) => condition.type),
    );
  }

  /** The pending proposal's creation time, or (decided or deleted) no series. */
  setProposalPending(namespace: string, proposal: string, createdAt: string | undefined): void {
    if (createdAt === undefined) this.proposalPendingSince.remove({ namespace, proposal });
    else this.proposalPendingSince.set({ namespace, proposal }, Date.parse(createdAt) / 1000);
  }

  queueObserver(name: string): QueueObserver {
    return {
      added: () => this.queueAdds.inc({ name }),
      retried: () => this.queueRetries.inc({ name }),
      depth: (depth) => this.queueDepth.set({ name }, depth),
      queued: (waitedMs) => this.queueDuration.observe({ name }, waitedMs / 1000),
      worked: (tookMs) => this.workDuration.observe({ name }, tookMs / 1000),
    };
  }
}
