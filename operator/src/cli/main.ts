/**
 * kubectl-remram's I/O: parse, connect as the kubeconfig's user, do the verb, print the result or what went
 * wrong. Approvals go through the /status subresource, where the admission policy checks them.
 */

import {
  backupStarted,
  backupsResponse,
  consistencyReport,
  migrationStatus,
  migrationsConfirmed,
  restoreStatus,
} from "@remram/contract";
import { decisionBlocker, decisionPatch, type ProposalView } from "../api/approval.js";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { sealedSecretsAttachment } from "../appliance/secrets-bundle.js";
import { dreamRequestAnnotation } from "../dream-schedule/request-annotation.js";
import { formatBackupDone, formatBackupList, formatRestoreDone } from "./backup.js";
import { findingsExitCode, formatConsistencyReport } from "./check.js";
import {
  type Access,
  applianceName,
  type Cluster,
  connect,
  contextNames,
  existingNames,
  householdMemberIds,
  kubernetesVersion,
  mayI,
  namespaceNames,
  operatorDeployments,
  readNamed,
  remramPath,
  whoAmI,
} from "./cluster.js";
import { type Command, type Connection, parseInvocation, UsageError } from "./commands.js";
import {
  type Candidate,
  type CompletionRequest,
  completionRequest,
  completionScripts,
  formatCompletions,
} from "./completion.js";
import { askCortex, callCortexAsAdmin } from "./cortex.js";
import { CliError, explain, missingPermission, notInstalled } from "./errors.js";
import { helpFor, usage, usageHint } from "./help.js";
import { runKnowledge } from "./knowledge-app.js";
import { formatConfirmed, formatMigrations } from "./migrations.js";
import { type ApplianceView, type DreamScheduleView, formatApplianceStatus } from "./status.js";
import { manageUsers } from "./user-commands.js";
import { buildInfo, formatClientVersion, formatServerVersion } from "./version.js";

const commandTimeoutMs = 15_000;
const completionTimeoutMs = 5_000;

const now = () => new Date().toISOString().replace(/\.\d{3}Z$/, "Z");

async function decide(
  command: Extract<Command, { verb: "approve" | "deny" }>,
  cluster: Cluster,
): Promise<string> {
  const { client, namespace } = cluster;
  const proposal = await readNamed<ProposalView>(cluster, "artifactproposals", command.name);
  const username = await whoAmI(client);
  const blocker = decisionBlocker(proposal, username);
  if (blocker !== undefined) throw new CliError(blocker);
  const needed: Access[] = [
    { verb: "approve", resource: "artifactproposals", name: command.name, namespace },
    { verb: "patch", resource: "artifactproposals", subresource: "status", name: command.name, namespace },
  ];
  for (const access of needed) {
    if ((await mayI(client, access)) === false)
      throw new CliError(missingPermission(username, access, command, namespace));
  }
  const decision = command.verb === "approve" ? "Approved" : "Denied";
  const patch = decisionPatch(proposal, decision, username, now(), command.comment);
  await client.jsonPatch(`${remramPath(namespace, "artifactproposals", command.name)}/status`, patch);
  return `artifactproposal/${command.name} ${decision.toLowerCase()} by ${username}; the operator ${decision === "Approved" ? "promotes it now" : "tells Cortex"}`;
}

async function exportPerson(
  command: Extract<Command, { verb: "export" }>,
  cluster: Cluster,
): Promise<string> {
  const appliance = await applianceName(cluster, command.appliance);
  const requestedBy = await whoAmI(cluster.client);
  const answer = await callCortexAsAdmin(command, cluster, appliance, "POST", "/admin/export", {
    userId: command.userId,
    requestedBy,
    format: command.output,
  });
  if (answer.status !== 200)
    throw new CliError(`Cortex of ${appliance} answered ${answer.status}: ${answer.body}`);
  const exported = JSON.parse(answer.body) as { format: string; markdown?: string };
  return command.output === "markdown" ? (exported.markdown ?? "") : JSON.stringify(exported, null, 2);
}

/** A check that reports findings exits 3, with the report on stdout like a clean one. */
async function checkAppliance(
  command: Extract<Command, { verb: "check" }>,
  cluster: Cluster,
): Promise<Outcome> {
  const appliance = await applianceName(cluster, command.appliance);
  // Cortex reads every store whole: minutes on a large household.
  const report = await askCortex(command, cluster, appliance, "POST", "/admin/check", consistencyReport, {
    timeoutMs: 600_000,
  });
  return {
    text:
      command.output === "json"
        ? JSON.stringify(report, null, 2)
        : formatConsistencyReport(appliance, report),
    exitCode: report.consistent ? 0 : findingsExitCode,
  };
}

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** How long `kubectl remram backup` waits for a backup already running before it asks for its own. */
const backupWaitMs = 10 * 60_000;

/** The appliance's Secrets for a backup taken now, sealed as the operator seals them for scheduled ones. */
async function sealedSecrets(cluster: Cluster, appliance: string) {
  const object = await readNamed<{ spec?: unknown }>(cluster, "remramappliances", appliance);
  const parsed = remramApplianceSpec.safeParse(object.spec ?? {});
  if (!parsed.success)
    throw new CliError(`the spec of RemramAppliance ${appliance} does not parse: ${parsed.error.message}`);
  const spec = parsed.data;
  try {
    return await sealedSecretsAttachment(
      cluster.client,
      { namespace: cluster.namespace, name: appliance, spec },
      new Date(),
    );
  } catch (error) {
    throw new CliError(
      `spec.backup.secrets puts the appliance's Secrets in each backup, and sealing them failed: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/** `backup list`, or a backup now, waited for (a household's backup takes seconds to minutes). */
async function backupAppliance(
  command: Extract<Command, { verb: "backup" }>,
  cluster: Cluster,
): Promise<string> {
  const appliance = await applianceName(cluster, command.appliance);
  const list = () => askCortex(command, cluster, appliance, "GET", "/admin/backups", backupsResponse);
  if (command.list) {
    const listing = await list();
    return command.output === "json"
      ? JSON.stringify(listing, null, 2)
      : formatBackupList(appliance, listing);
  }
  const started = Date.now();
  const attachments = await sealedSecrets(cluster, appliance);
  // A scheduled backup (or another person's) running now: wait for it, then take this one, as asked.
  let id: string | undefined;
  for (let waited = 0; id === undefined; waited += 2_000) {
    const answer = await callCortexAsAdmin(command, cluster, appliance, "POST", "/admin/backups", {
      attachments,
    });
    if (answer.status === 409 && answer.body.includes("is running") && waited < backupWaitMs) {
      await pause(2_000);
      continue;
    }
    if (answer.status >= 300)
      throw new CliError(`Cortex of ${appliance} answered ${answer.status}: ${answer.body}`);
    id = backupStarted.parse(JSON.parse(answer.body)).id;
  }
  for (;;) {
    await pause(2_000);
    const listing = await list();
    if (listing.running?.id === id) continue;
    const done = listing.backups.find((backup) => backup.id === id);
    if (done !== undefined)
      return command.output === "json"
        ? JSON.stringify(done, null, 2)
        : formatBackupDone(appliance, done, (Date.now() - started) / 1000);
    const failed =
      listing.lastFailure?.id === id ? listing.lastFailure.error : "it is not in the backup volume";
    throw new CliError(`backup ${id} of ${appliance} failed: ${failed}`);
  }
}

async function restoreAppliance(
  command: Extract<Command, { verb: "restore" }>,
  cluster: Cluster,
): Promise<string> {
  const appliance = await applianceName(cluster, command.appliance);
  const { id } = await askCortex(command, cluster, appliance, "POST", "/admin/restore", backupStarted, {
    body: { backupId: command.backupId },
  });
  for (;;) {
    await pause(2_000);
    const status = await askCortex(command, cluster, appliance, "GET", "/admin/restore", restoreStatus);
    if (status.running !== undefined) continue;
    if (
      status.last?.backupId === id &&
      (status.lastFailure === undefined || status.last.restoredAt > status.lastFailure.failedAt)
    )
      return formatRestoreDone(appliance, status.last);
    throw new CliError(
      `restore of ${id} onto ${appliance} failed: ${status.lastFailure?.error ?? "no report"}`,
    );
  }
}

/** The rebuild's progress and the kept indices, or the admin's confirmation that deletes those. */
async function migrations(
  command: Extract<Command, { verb: "migrations" }>,
  cluster: Cluster,
): Promise<string> {
  const appliance = await applianceName(cluster, command.appliance);
  const ask = <T>(method: "GET" | "POST", path: string, schema: Parameters<typeof askCortex<T>>[5]) =>
    askCortex(command, cluster, appliance, method, path, schema);
  if (command.confirm) {
    const confirmed = await ask("POST", "/admin/migrations/confirm", migrationsConfirmed);
    if (command.output === "json") return JSON.stringify(confirmed, null, 2);
    return formatConfirmed(appliance, confirmed.deleted);
  }
  const status = await ask("GET", "/admin/migrations", migrationStatus);
  return command.output === "json" ? JSON.stringify(status, null, 2) : formatMigrations(appliance, status);
}

/** What a command prints (on stdout; `notice` on stderr), and its exit status when that is not 0. */
interface Outcome {
  text: string;
  notice?: string;
  exitCode?: number;
}

async function execute(command: Command, cluster: Cluster): Promise<string | Outcome> {
  const { client, namespace } = cluster;
  switch (command.verb) {
    case "approve":
    case "deny":
      return decide(command, cluster);
    case "diff": {
      const proposal = await readNamed<ProposalView>(cluster, "artifactproposals", command.name);
      return `# ${proposal.spec.artifactPath}  (${proposal.spec.rationale})\n${proposal.spec.diff}`;
    }
    case "status": {
      // The schedules show their cycles beside the appliance; reading them is optional (RBAC may not allow it).
      const schedules = (await client
        .get<{ items: DreamScheduleView[] }>(remramPath(namespace, "dreamschedules"))
        .catch(() => undefined)) ?? { items: [] };
      const show = (appliance: ApplianceView) => formatApplianceStatus(appliance, schedules.items);
      if (command.name !== undefined)
        return show(await readNamed<ApplianceView>(cluster, "remramappliances", command.name));
      const list = await client.get<{ items: ApplianceView[] }>(remramPath(namespace, "remramappliances"));
      if (list === undefined) throw new CliError(notInstalled("remramappliances"));
      if (list.items.length === 0)
        return `no RemramAppliance in namespace ${namespace} (another namespace? -n NAMESPACE)`;
      return list.items.map(show).join("\n\n");
    }
    case "dream-now": {
      await readNamed(cluster, "dreamschedules", command.name);
      const requestedAt = now();
      await client.mergePatch(remramPath(namespace, "dreamschedules", command.name), {
        metadata: { annotations: { [dreamRequestAnnotation]: requestedAt } },
      });
      return `dreamschedule/${command.name}: a cycle was requested at ${requestedAt}`;
    }
    case "export":
      return exportPerson(command, cluster);
    case "check":
      return checkAppliance(command, cluster);
    case "backup":
      return backupAppliance(command, cluster);
    case "restore":
      return restoreAppliance(command, cluster);
    case "migrations":
      return migrations(command, cluster);
    case "user":
      return manageUsers(command, cluster);
    case "knowledge":
      return runKnowledge(command, cluster);
    case "version": {
      const [kubernetes, operators] = await Promise.all([
        kubernetesVersion(client),
        operatorDeployments(client),
      ]);
      return formatServerVersion({ operators, ...(kubernetes ? { kubernetes } : {}) });
    }
    default:
      throw new Error(`${command.verb} needs no cluster`);
  }
}

async function candidates(request: CompletionRequest): Promise<readonly Candidate[]> {
  const { source, connection } = request;
  switch (source.kind) {
    case "words":
      return source.candidates;
    case "contexts":
      return contextNames(connection).map((value) => ({ value }));
    case "namespaces":
      return (await namespaceNames(connect(connection, completionTimeoutMs).client)).map((value) => ({
        value,
      }));
    case "names": {
      const cluster = connect(connection, completionTimeoutMs);
      const names = (await existingNames(cluster.client, cluster.namespace, source.resource)) ?? [];
      return names
        .filter((item) => !source.pendingOnly || item.detail === "Pending")
        .map((item) => ({ value: item.name, ...(item.detail ? { description: item.detail } : {}) }));
    }
    case "members": {
      const cluster = connect(connection, completionTimeoutMs);
      return (await householdMemberIds(cluster.client, cluster.namespace)).map(({ member, appliance }) => ({
        value: member,
        description: `member of ${appliance}`,
      }));
    }
    default:
      return [];
  }
}

/** Cobra's `__complete` answer; never an error (a shell would print it in the middle of the line). */
async function complete(words: readonly string[]): Promise<string> {
  const request = completionRequest(words);
  const found = await candidates(request).catch(() => []);
  return formatCompletions(request, found);
}

/** Run kubectl-remram with `argv` (the words after `kubectl remram`); resolves to the exit code. */
export async function main(argv: readonly string[]): Promise<number> {
  const out = (text: string) => process.stdout.write(text.endsWith("\n") ? text : `${text}\n`);
  let command: Command;
  let connection: Connection;
  try {
    ({ command, connection } = parseInvocation(argv));
  } catch (error) {
    if (!(error instanceof UsageError)) throw error;
    process.stderr.write(`error: ${error.message}\n${usageHint(error.topic)}`);
    return 2;
  }
  switch (command.verb) {
    case "help":
      out(command.topic ? helpFor(command.topic) : usage);
      return 0;
    case "completion":
      out(completionScripts[command.shell]);
      return 0;
    case "complete":
      process.stdout.write(await complete(command.words));
      return 0;
    case "version":
      out(formatClientVersion(buildInfo, process.versions.node));
      if (command.clientOnly) return 0;
  }
  let cluster: Cluster | undefined;
  try {
    cluster = connect(connection, commandTimeoutMs);
    const outcome = await execute(command, cluster);
    if (typeof outcome === "string") {
      out(outcome);
      return 0;
    }
    if (outcome.notice !== undefined) process.stderr.write(`${outcome.notice}\n`);
    out(outcome.text);
    return outcome.exitCode ?? 0;
  } catch (error) {
    const context = {
      command,
      namespace: cluster?.namespace ?? connection.namespace ?? "default",
      ...(cluster ? { server: cluster.server, contextName: cluster.contextName } : {}),
    };
    process.stderr.write(`error: ${explain(error, context)}\n`);
    return 1;
  }
}
