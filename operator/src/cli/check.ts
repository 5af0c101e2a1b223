/** What `kubectl remram check` prints of Cortex's consistency report (pure). */
import type { ConsistencyReport } from "@remram/contract";

/** The exit status of a check that ran and reported findings (1 is a check that could not run, 2 a usage error). */
export const findingsExitCode = 3;

export function formatConsistencyReport(appliance: string, report: ConsistencyReport): string {
  const { counts } = report;
  const seconds = (report.durationMs / 1000).toFixed(1);
  const lines = [
    `Checked ${appliance} at ${report.checkedAt} in ${seconds} s: ${counts.knowledge} knowledge objects` +
      ` (${counts.awaitingVector} awaiting a vector), ${counts.vectors} vectors, ${counts.chunks} chunks,` +
      ` ${counts.archivedDocuments} archived documents, ${counts.proposals} proposals, ${counts.commits} commits.`,
  ];
  if (report.consistent) return [...lines, "Nothing wrong."].join("\n");
  const total = Object.values(report.byKind).reduce((sum, count) => sum + (count ?? 0), 0);
  const byKind = Object.entries(report.byKind)
    .map(([kind, count]) => `${count} ${kind}`)
    .join(", ");
  lines.push(`${total} findings (${byKind}):`);
  const kindWidth = Math.max(...report.findings.map((finding) => finding.kind.length));
  const idWidth = Math.min(64, Math.max(...report.findings.map((finding) => finding.id.length)));
  for (const finding of report.findings) {
    lines.push(`  ${finding.kind.padEnd(kindWidth)}  ${finding.id.padEnd(idWidth)}  ${finding.detail}`);
  }
  if (report.findings.length < total)
    lines.push(`(the first ${report.findings.length} of ${total}; -o json gives the same report as JSON)`);
  lines.push("What each kind means and how to repair it: docs/runbooks/RemramDataInconsistent.md");
  return lines.join("\n");
}
