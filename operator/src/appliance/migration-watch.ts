/**
 * Where an appliance's index migrations stand, from Cortex's GET /admin/migrations (read by a CortexWatch): the
 * status.migrations and IndexesCurrent condition. A Cortex release whose knowledge template cannot be applied in
 * place rebuilds the index after start-up; writes wait for it with 503, so a person who wonders why the assistant
 * cannot save right now finds the reason and the progress on the appliance.
 */
import type { MigrationStatus } from "@remram/contract";
import { ApplianceReason, type RemramApplianceStatus } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";
import { notReadYetCondition } from "./cortex-watch.js";

export type MigrationsStatus = NonNullable<RemramApplianceStatus["migrations"]>;

export const conditionType = "IndexesCurrent";
/** How often Cortex is asked while a rebuild runs or waits (or Cortex is still starting). */
export const movingPollMs = 15_000;
/** How often while old indices are kept: a confirmation or the retention deletes them. */
export const keptPollMs = 60_000;
/** How often once nothing is migrating or kept: a new release restarts Cortex, which makes the watch ask again. */
export const settledPollMs = 3_600_000;

export function migrationsStatus(status: MigrationStatus): MigrationsStatus {
  const { rebuild } = status;
  return {
    templateVersion: status.templateVersion,
    state: status.state,
    ...(rebuild && status.state !== "current"
      ? { rebuilding: { from: rebuild.from, to: rebuild.to, copied: rebuild.copied, total: rebuild.total } }
      : {}),
    ...(status.waiting === undefined ? {} : { waiting: status.waiting }),
    kept: status.kept
      .slice(0, 16)
      .map((kept) => ({ index: kept.index, ...(kept.deleteAfter ? { deleteAfter: kept.deleteAfter } : {}) })),
  };
}

export function migrationsCondition(status: MigrationsStatus | undefined): ConditionInput {
  const base = { type: conditionType };
  if (status === undefined || status.state === "starting") return notReadYetCondition(conditionType);
  const version = `index template ${status.templateVersion}`;
  if (status.state === "current") {
    return {
      ...base,
      status: "True",
      reason: ApplianceReason.IndexesCurrent,
      message: currentMessage(status),
    };
  }
  const copy = status.rebuilding;
  const progress =
    copy === undefined
      ? ""
      : ` (${copy.from} to ${copy.to}: ${copy.copied} of ${copy.total}, ${copy.total === 0 ? 0 : Math.floor((copy.copied / copy.total) * 100)}%)`;
  if (status.state === "rebuilding") {
    return {
      ...base,
      status: "False",
      reason: ApplianceReason.RebuildingIndex,
      message: `rebuilding the knowledge index for ${version}${progress}; reads are served, writes wait until it ends`,
    };
  }
  return {
    ...base,
    status: "False",
    reason: ApplianceReason.RebuildWaiting,
    message:
      `the knowledge index rebuild for ${version} failed and is tried again${progress}: ${status.waiting ?? "no reason given"}; reads are served from the old index, writes wait`.slice(
        0,
        1024,
      ),
  };
}

function currentMessage(status: MigrationsStatus): string {
  const version = `every index is on index template ${status.templateVersion}`;
  if (status.kept.length === 0) return version;
  const kept = status.kept
    .map((index) => `${index.index} until ${index.deleteAfter ?? "an admin confirms"}`)
    .join(", ");
  return `${version}; kept for a helm rollback: ${kept} (kubectl remram migrations confirm deletes them)`.slice(
    0,
    1024,
  );
}

/** 15 s while a rebuild runs or waits, a minute while old indices are kept, hourly otherwise. */
export function migrationsPollMs(status: MigrationsStatus | undefined): number {
  if (status === undefined || status.state !== "current") return movingPollMs;
  return status.kept.length > 0 ? keptPollMs : settledPollMs;
}
