/**
 * What `kubectl remram status` prints: each appliance's Ready, its components' conditions, long work in progress
 * (model pulls, dream cycles) and its endpoints. Pure.
 */
import type { Condition } from "../api/v1alpha1/common.js";

export interface ApplianceView {
  metadata: { name: string; namespace?: string; generation?: number };
  status?: {
    observedGeneration?: number;
    hardwareProfile?: string;
    conditions?: Condition[];
    endpoints?: Record<string, string>;
    models?: {
      name: string;
      role: string;
      pull?: { status: string; completedBytes: number; totalBytes: number; percent: number; error?: string };
    }[];
  };
}

/** A DreamSchedule as `status` shows it beside its appliance. */
export interface DreamScheduleView {
  metadata: { name: string };
  spec: { applianceRef: { name: string }; schedule: string };
  status?: {
    nextScheduleTime?: string;
    lastRun?: {
      startedAt: string;
      finishedAt?: string;
      outcome: string;
      message?: string;
      counts?: Record<string, number>;
      mirroredProposals?: number;
    };
  };
}

function mebibytes(bytes: number): string {
  return `${(bytes / 1024 / 1024).toFixed(bytes < 10 * 1024 * 1024 ? 1 : 0)} MiB`;
}

/** Long work in progress, so a person sees it move: model pulls (percent, bytes) and dream cycles. */
function progressLines(appliance: ApplianceView, schedules: readonly DreamScheduleView[]): string[] {
  const lines: string[] = [];
  for (const model of appliance.status?.models ?? []) {
    const pull = model.pull;
    if (pull === undefined) continue;
    const bytes =
      pull.totalBytes > 0 ? ` (${mebibytes(pull.completedBytes)} of ${mebibytes(pull.totalBytes)})` : "";
    lines.push(
      `  model ${model.name} (${model.role}): ${pull.percent}% ${pull.status}${bytes}` +
        (pull.error === undefined ? "" : `; last attempt failed: ${pull.error}`),
    );
  }
  for (const schedule of schedules) {
    if (schedule.spec.applianceRef.name !== appliance.metadata.name) continue;
    const run = schedule.status?.lastRun;
    const next =
      schedule.status?.nextScheduleTime === undefined ? "" : `, next ${schedule.status.nextScheduleTime}`;
    if (run === undefined) {
      lines.push(`  dream ${schedule.metadata.name} (${schedule.spec.schedule}): no cycle yet${next}`);
    } else if (run.outcome === "Running") {
      lines.push(`  dream ${schedule.metadata.name}: a cycle is running since ${run.startedAt}`);
    } else {
      const changes = Object.entries(run.counts ?? {})
        .filter(([name, count]) => count > 0 && name !== "objectsScanned" && name !== "survived")
        .map(([name, count]) => `${name} ${count}`)
        .join(", ");
      lines.push(
        `  dream ${schedule.metadata.name}: last cycle ${run.outcome} at ${run.finishedAt ?? run.startedAt}` +
          (changes === "" ? "" : ` (${changes})`) +
          (run.mirroredProposals ? `, ${run.mirroredProposals} proposals to review` : "") +
          (run.message === undefined ? "" : `: ${run.message}`) +
          next,
      );
    }
  }
  return lines;
}

export function formatApplianceStatus(
  appliance: ApplianceView,
  schedules: readonly DreamScheduleView[] = [],
): string {
  const conditions = appliance.status?.conditions ?? [];
  const ready = conditions.find((condition) => condition.type === "Ready");
  const lines = [
    `${appliance.metadata.name}: ${ready ? `Ready=${ready.status} (${ready.reason})` : "not reconciled yet"}` +
      (appliance.status?.hardwareProfile ? `, profile ${appliance.status.hardwareProfile}` : ""),
  ];
  if (
    appliance.status?.observedGeneration !== undefined &&
    appliance.status.observedGeneration !== appliance.metadata.generation
  ) {
    lines.push(
      `  (status is for generation ${appliance.status.observedGeneration}; spec is at ${appliance.metadata.generation})`,
    );
  }
  const width = Math.max(0, ...conditions.map((condition) => condition.type.length));
  for (const condition of conditions) {
    if (condition.type === "Ready") continue;
    lines.push(
      `  ${condition.type.padEnd(width)}  ${condition.status.padEnd(7)}  ${condition.reason}: ${condition.message}`,
    );
  }
  lines.push(...progressLines(appliance, schedules));
  for (const [component, url] of Object.entries(appliance.status?.endpoints ?? {})) {
    lines.push(`  ${component} → ${url}`);
  }
  return lines.join("\n");
}
