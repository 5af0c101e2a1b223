/** What `kubectl remram migrations` prints of Cortex's migration status and of a confirmation (pure). */
import type { MigrationStatus } from "@remram/contract";

export function formatMigrations(appliance: string, status: MigrationStatus): string {
  const lines: string[] = [];
  const { rebuild } = status;
  if (status.state === "starting") lines.push(`${appliance}'s Cortex is still setting up its indices.`);
  else if (status.state === "current")
    lines.push(`${appliance}'s indices are current (template version ${status.templateVersion}).`);
  else if (rebuild !== undefined) {
    const percent = rebuild.total === 0 ? 100 : Math.floor((100 * rebuild.copied) / rebuild.total);
    lines.push(
      `${appliance}'s knowledge index is being rebuilt: ${rebuild.from} → ${rebuild.to}, ${rebuild.copied} of ${rebuild.total} documents (${percent} %), since ${rebuild.startedAt}. Reads go on; writes wait until it is done.`,
    );
  }
  if (status.waiting !== undefined) lines.push(`It failed and is tried again: ${status.waiting}`);
  if (rebuild?.finishedAt !== undefined)
    lines.push(
      `Rebuilt ${rebuild.from} (template v${rebuild.fromTemplateVersion}) into ${rebuild.to}: ${rebuild.copied} documents, ${rebuild.startedAt} → ${rebuild.finishedAt}.`,
    );
  if (status.kept.length === 0) return lines.join("\n");
  lines.push(`Kept for a rollback to the release before (write-blocked):`);
  for (const kept of status.kept) {
    const until =
      kept.deleteAfter === undefined ? "until you confirm" : `until ${kept.deleteAfter} or until you confirm`;
    lines.push(`  ${kept.index}${kept.replacedBy ? ` (replaced by ${kept.replacedBy})` : ""}, ${until}`);
  }
  lines.push(
    `Once the upgraded appliance works for you: kubectl remram migrations confirm --appliance ${appliance}`,
  );
  return lines.join("\n");
}

export function formatConfirmed(appliance: string, deleted: readonly string[]): string {
  if (deleted.length === 0) return `${appliance} kept no index for a rollback; nothing to delete.`;
  return `Deleted ${deleted.join(", ")} from ${appliance}: a rollback to the release before the migration is no longer possible.`;
}
