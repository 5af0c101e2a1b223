/**
 * What the operator does for an appliance's data besides running it: the periodic consistency check, the
 * scheduled backups, and watching its vectors (a re-embedding), its index migrations and the room it has left.
 * Each runs in the background and reports through status and a condition; this gathers them for the reconciler,
 * which requeues at the soonest of their next times.
 */
import type { RemramApplianceSpec, RemramApplianceStatus } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";
import { destinationMissingCondition, destinationRecheckMs } from "./backup-destination.js";
import type { ScheduledBackups } from "./backups.js";
import type { ConsistencyChecks } from "./consistency-check.js";
import type { CortexWatch } from "./cortex-watch.js";
import { type EmbeddingsStatus, embeddingsCondition, embeddingsPollMs } from "./embedding-watch.js";
import { type MigrationsStatus, migrationsCondition, migrationsPollMs } from "./migration-watch.js";
import { type ApplianceStorage, storageCondition, storagePollMs } from "./storage.js";

export interface DataCare {
  /** The periodic consistency check (absent: not checked, no DataConsistent condition). */
  consistency?: ConsistencyChecks | undefined;
  /** Scheduled backups (absent: no BackedUp condition). */
  backups?: ScheduledBackups | undefined;
  /** Whether the vectors are current (absent: no EmbeddingsCurrent condition). */
  embeddings?: CortexWatch<EmbeddingsStatus> | undefined;
  /** Whether an index migration runs or old indices are kept (absent: no IndexesCurrent condition). */
  migrations?: CortexWatch<MigrationsStatus> | undefined;
  /** Room left on Cortex's volumes and OpenSearch's disk (absent: no StorageAvailable condition). */
  storage?: CortexWatch<ApplianceStorage> | undefined;
}

export interface DataCareObservation {
  conditions: ConditionInput[];
  status: Pick<RemramApplianceStatus, "consistency" | "backup" | "embeddings" | "migrations" | "storage">;
  nextInMs?: number;
}

export function observeDataCare(
  care: DataCare,
  appliance: {
    namespace: string;
    name: string;
    spec: RemramApplianceSpec;
    status: RemramApplianceStatus | undefined;
    createdMs: number;
    /** What keeps spec.backup's destination from Cortex (backup-destination.ts). */
    backupProblem?: string | undefined;
    /** The embedding model Cortex is given (the spec's or the profile's) and its dimensions. */
    embedding: { model: string; dimensions: number };
  },
  cortexAvailable: boolean,
): DataCareObservation {
  const { namespace, name, spec, status, backupProblem } = appliance;
  const consistency = care.consistency?.observe(namespace, name, status, cortexAvailable);
  // No destination, no backup to ask for: status keeps what it said and the destination is looked at again soon.
  const backups =
    backupProblem !== undefined && spec.backup !== undefined
      ? {
          condition: destinationMissingCondition(backupProblem),
          status: status?.backup,
          nextInMs: destinationRecheckMs,
        }
      : care.backups?.observe(namespace, name, spec.backup, status, cortexAvailable, appliance.createdMs);
  const embeddings = care.embeddings?.observe(
    namespace,
    name,
    status?.embeddings,
    (last) => embeddingsPollMs(last, appliance.embedding),
    cortexAvailable,
  );
  const migrations = care.migrations?.observe(
    namespace,
    name,
    status?.migrations,
    migrationsPollMs,
    cortexAvailable,
  );
  const storage = care.storage?.observe(namespace, name, status?.storage, storagePollMs, cortexAvailable);
  const times = [
    consistency?.nextInMs,
    backups?.nextInMs,
    embeddings?.nextInMs,
    migrations?.nextInMs,
    storage?.nextInMs,
  ].filter((ms): ms is number => ms !== undefined);
  return {
    conditions: [
      consistency?.condition,
      backups?.condition,
      embeddings && embeddingsCondition(embeddings.status),
      migrations && migrationsCondition(migrations.status),
      storage && storageCondition(storage.status),
    ].filter((c): c is ConditionInput => c !== undefined),
    status: {
      ...(consistency?.status === undefined ? {} : { consistency: consistency.status }),
      ...(backups?.status === undefined ? {} : { backup: backups.status }),
      ...(embeddings?.status === undefined ? {} : { embeddings: embeddings.status }),
      ...(migrations?.status === undefined ? {} : { migrations: migrations.status }),
      ...(storage?.status === undefined ? {} : { storage: storage.status }),
    },
    ...(times.length > 0 ? { nextInMs: Math.min(...times) } : {}),
  };
}

export function forgetDataCare(care: DataCare, namespace: string, name: string): void {
  care.consistency?.forget(namespace, name);
  care.backups?.forget(namespace, name);
  care.embeddings?.forget(namespace, name);
  care.migrations?.forget(namespace, name);
  care.storage?.forget(namespace, name);
}
