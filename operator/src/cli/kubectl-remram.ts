#!/usr/bin/env node
/**
 * kubectl-remram: a kubectl plugin (install it on PATH; kubectl finds `kubectl-remram`). It acts as the user of the
 * current kubeconfig context; approvals go through the /status subresource, where the admission policy checks them.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { dreamRequestAnnotation } from "../dream-schedule/reconciler.js";
import { KubeApiError, KubeClient } from "../runtime/kube-client.js";
import {
  type ApplianceView,
  type Command,
  type Connection,
  decisionBlocker,
  decisionPatch,
  formatApplianceStatus,
  type ProposalView,
  parseArguments,
  splitConnectionFlags,
  UsageError,
  usage,
} from "./commands.js";

const api = (namespace: string) => `/apis/remram.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}`;

async function whoAmI(client: KubeClient): Promise<string> {
  const review = await client.create<{ status?: { userInfo?: { username?: string } } }>(
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  );
  const username = review.status?.userInfo?.username;
  if (!username) throw new Error("the API server did not say who you are (SelfSubjectReview)");
  return username;
}

async function readProposal(client: KubeClient, namespace: string, name: string): Promise<ProposalView> {
  const proposal = await client.get<ProposalView>(
    `${api(namespace)}/artifactproposals/${encodeURIComponent(name)}`,
  );
  if (proposal === undefined)
    throw new Error(
      `no ArtifactProposal "${name}" in namespace ${namespace} (kubectl get artifactproposals -n ${namespace})`,
    );
  return proposal;
}

async function execute(command: Command, client: KubeClient, namespace: string): Promise<string> {
  switch (command.verb) {
    case "help":
      return usage;
    case "approve":
    case "deny": {
      const proposal = await readProposal(client, namespace, command.name);
      const username = await whoAmI(client);
      const blocker = decisionBlocker(proposal, username);
      if (blocker !== undefined) throw new Error(blocker);
      const decision = command.verb === "approve" ? "Approved" : "Denied";
      const patch = decisionPatch(
        proposal,
        decision,
        username,
        new Date().toISOString().replace(/\.\d{3}Z$/, "Z"),
        command.comment,
      );
      await client.jsonPatch(
        `${api(namespace)}/artifactproposals/${encodeURIComponent(command.name)}/status`,
        patch,
      );
      return `artifactproposal/${command.name} ${decision.toLowerCase()} by ${username}; the operator ${decision === "Approved" ? "promotes it now" : "tells Cortex"}`;
    }
    case "diff": {
      const proposal = await readProposal(client, namespace, command.name);
      return `# ${proposal.spec.artifactPath}  (${proposal.spec.rationale})\n${proposal.spec.diff}`;
    }
    case "status": {
      const path = `${api(namespace)}/remramappliances`;
      if (command.name !== undefined) {
        const appliance = await client.get<ApplianceView>(`${path}/${encodeURIComponent(command.name)}`);
        if (appliance === undefined)
          throw new Error(`no RemramAppliance "${command.name}" in namespace ${namespace}`);
        return formatApplianceStatus(appliance);
      }
      const list = await client.get<{ items: ApplianceView[] }>(path);
      if (list === undefined || list.items.length === 0)
        return `no RemramAppliance in namespace ${namespace}`;
      return list.items.map(formatApplianceStatus).join("\n\n");
    }
    case "dream-now": {
      const path = `${api(namespace)}/dreamschedules/${encodeURIComponent(command.name)}`;
      if ((await client.get(path)) === undefined)
        throw new Error(`no DreamSchedule "${command.name}" in namespace ${namespace}`);
      const requestedAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
      await client.mergePatch(path, { metadata: { annotations: { [dreamRequestAnnotation]: requestedAt } } });
      return `dreamschedule/${command.name}: a cycle was requested at ${requestedAt}`;
    }
  }
}

/** Turn API errors into what the user should do about them. */
function explain(error: unknown, command: Command, namespace: string): string {
  if (error instanceof KubeApiError) {
    if (error.status === 401) return "the API server did not accept your credentials (check your kubeconfig)";
    if (error.status === 403 && (command.verb === "approve" || command.verb === "deny")) {
      return `not allowed: ${error.message}\nApprovers need the approve verb on artifactproposals and patch on artifactproposals/status in ${namespace} (the chart's remram-approver ClusterRole).`;
    }
    if (error.status === 403) return `not allowed: ${error.message}`;
    if (error.status === 409 || error.status === 422) return `refused: ${error.message}`;
    return `${error.status} ${error.reason}: ${error.message}`;
  }
  return error instanceof Error ? error.message : String(error);
}

async function main(argv: readonly string[]): Promise<number> {
  let command: Command;
  let connection: Connection;
  try {
    const split = splitConnectionFlags(argv);
    connection = split.connection;
    command = parseArguments(split.rest);
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`error: ${error.message}\n\n${usage}`);
      return 2;
    }
    throw error;
  }
  const kubeConfig = new KubeConfig();
  if (connection.kubeconfig === undefined) kubeConfig.loadFromDefault();
  else kubeConfig.loadFromFile(connection.kubeconfig);
  if (connection.context !== undefined) kubeConfig.setCurrentContext(connection.context);
  const namespace =
    (command.verb !== "help" ? command.namespace : undefined) ??
    kubeConfig.getContextObject(kubeConfig.getCurrentContext())?.namespace ??
    "default";
  try {
    process.stdout.write(
      `${await execute(command, new KubeClient(kubeConfig, { fieldManager: "kubectl-remram" }), namespace)}\n`,
    );
    return 0;
  } catch (error) {
    process.stderr.write(`error: ${explain(error, command, namespace)}\n`);
    return 1;
  }
}

process.exitCode = await main(process.argv.slice(2));
