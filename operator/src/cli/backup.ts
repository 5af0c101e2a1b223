/** What `kubectl remram backup` and `restore` print of Cortex's answers (pure). */
import type { BackupSummary, BackupsResponse, RestoreReport } from "@remram/contract";

const mebibytes = (bytes: number) => `${(bytes / 1_048_576).toFixed(1)} MiB`;

function summaryLine(backup: BackupSummary): string {
  const { counts } = backup;
  return `${backup.id}  ${backup.completedAt}  ${mebibytes(backup.bytes).padStart(10)}  ${counts.knowledge ?? 0} knowledge objects, ${counts.archivedDocuments ?? 0} archived documents, ${counts.commits ?? 0} commits`;
}

export function formatBackupList(appliance: string, listing: BackupsResponse): string {
  if (!listing.configured)
    return `${appliance} has no backup volume: set spec.backup.volume.claimName on the RemramAppliance.`;
  const lines = [
    listing.backups.length === 0
      ? `No backup of ${appliance} yet.`
      : `${listing.backups.length} backups of ${appliance}, newest first:`,
    ...listing.backups.map((backup) => `  ${summaryLine(backup)}`),
  ];
  if (listing.running)
    lines.push(
      `Running: ${listing.running.id} since ${listing.running.startedAt} (${listing.running.phase}, ${listing.running.documentsDone} documents so far).`,
    );
  if (listing.destinationError)
    lines.push(`The backup destination cannot be read: ${listing.destinationError}`);
  if (listing.lastFailure)
    lines.push(
      `Last failure: ${listing.lastFailure.id} at ${listing.lastFailure.failedAt}: ${listing.lastFailure.error}`,
    );
  return lines.join("\n");
}

export function formatBackupDone(appliance: string, backup: BackupSummary, seconds: number): string {
  return `Backed up ${appliance} in ${seconds.toFixed(1)} s:\n  ${summaryLine(backup)}`;
}

export function formatRestoreDone(appliance: string, report: RestoreReport): string {
  const { counts } = report;
  return [
    `Restored ${report.backupId} onto ${appliance} in ${(report.durationMs / 1000).toFixed(1)} s: ${counts.knowledge ?? 0} knowledge objects, ${counts.vectors ?? 0} vectors, ${counts.archivedDocuments ?? 0} archived documents, ${counts.commits ?? 0} commits.`,
    report.erasuresReplayed > 0
      ? `${report.erasuresReplayed} erasures made after the backup were replayed: those people's data is gone again.`
      : "No erasure was made after the backup.",
    ...(report.forgetsReplayed > 0
      ? [`${report.forgetsReplayed} knowledge objects forgotten after the backup were forgotten again.`]
      : []),
  ].join("\n");
}
