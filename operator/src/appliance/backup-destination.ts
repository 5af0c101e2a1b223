/**
 * Whether spec.backup's destination exists before Cortex is given it: a claim that does not exist would keep
 * Cortex's pod Pending and a Secret without its keys would keep it from starting, so a misspelt name in
 * spec.backup would take the household's memory down. Until the destination checks out Cortex runs without
 * backups and BackedUp says what is missing; the reconciler looks again every destinationRecheckMs (the user's
 * claims and Secrets are not watched: they carry no label of the appliance's).
 */
import { ApplianceReason } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";
import type { KubeClient, KubeObject } from "../runtime/kube-client.js";
import { type BackupSpec, backupConditionType } from "./backups.js";
import { decodeSecretValue } from "./gateway-access.js";

export const destinationRecheckMs = 30_000;
/** The files Cortex reads from the mounted Secret (CORTEX_BACKUP_S3_CREDENTIALS_DIR). */
export const s3CredentialKeys = ["access-key-id", "secret-access-key"] as const;

/** What keeps the destination from Cortex, or undefined when it is there (or spec.backup is unset). */
export async function backupDestinationProblem(
  client: Pick<KubeClient, "get">,
  namespace: string,
  spec: BackupSpec | undefined,
): Promise<string | undefined> {
  if (spec?.volume) {
    const { claimName } = spec.volume;
    const claim = await client.get<KubeObject & { status?: { phase?: string } }>(
      `/api/v1/namespaces/${namespace}/persistentvolumeclaims/${claimName}`,
    );
    if (claim === undefined)
      return `PersistentVolumeClaim ${claimName} (spec.backup.volume.claimName) does not exist in namespace ${namespace}`;
    // Pending is fine: a WaitForFirstConsumer class binds it when Cortex's pod is scheduled.
    if (claim.status?.phase === "Lost")
      return `PersistentVolumeClaim ${claimName} (spec.backup.volume.claimName) lost its volume`;
  }
  if (spec?.s3) {
    const { name } = spec.s3.credentialsSecretRef;
    const secret = await client.get<KubeObject>(`/api/v1/namespaces/${namespace}/secrets/${name}`);
    if (secret === undefined)
      return `Secret ${name} (spec.backup.s3.credentialsSecretRef) does not exist in namespace ${namespace}`;
    const missing = s3CredentialKeys.filter((key) => !decodeSecretValue(secret, key)?.trim());
    if (missing.length > 0) return `Secret ${name} has no ${missing.join(" and no ")}`;
  }
  return undefined;
}

/** BackedUp while the destination is missing (pure). */
export function destinationMissingCondition(problem: string): ConditionInput {
  return {
    type: backupConditionType,
    status: "False",
    reason: ApplianceReason.BackupDestinationMissing,
    message: `${problem}: Cortex runs without backups until it is there`.slice(0, 1024),
  };
}
