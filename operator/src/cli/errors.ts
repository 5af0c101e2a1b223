/**
 * What kubectl-remram says when something fails, naming the cause and what to do: no RBAC (which verb on which
 * resource is missing, and the ClusterRole that grants it), an unknown name (what exists instead), no cluster (no
 * kubeconfig, an unknown context, a server that does not answer, with its URL). Pure: main.ts passes the facts.
 */
import { KubeApiError } from "../runtime/kube-client.js";
import type { Command } from "./commands.js";

/** A failure whose message is already what the user should read. */
export class CliError extends Error {
  override readonly name = "CliError";
}

export interface ErrorContext {
  command: Command;
  namespace: string;
  /** The API server's URL from the kubeconfig. */
  server?: string;
  /** The kubeconfig context in use. */
  contextName?: string;
}

const approverRole = "remram-approver";

/** `user` in an object name: lowercase letters, digits, '-' and '.'. */
const slugOf = (user: string): string =>
  user
    .toLowerCase()
    .replace(/[^a-z0-9.-]+/g, "-")
    .replace(/^[-.]+|[-.]+$/g, "");

/** A RoleBinding name for `user`. */
function bindingName(user: string): string {
  return `${approverRole}-${slugOf(user)}`.slice(0, 63).replace(/[-.]+$/, "");
}

/** `--user=alice`, or `--serviceaccount=ns:name` for a ServiceAccount's username. */
function subjectFlag(user: string): string {
  const serviceAccount = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(user);
  return serviceAccount ? `--serviceaccount=${serviceAccount[1]}:${serviceAccount[2]}` : `--user=${user}`;
}

/** Which permissions a verb needs and who grants them. */
export function grantHint(command: Pick<Command, "verb">, namespace: string, user?: string): string {
  const who = user ?? "USER";
  const bind = `  kubectl create rolebinding ${bindingName(who)} --clusterrole=${approverRole} ${subjectFlag(who)} -n ${namespace}`;
  switch (command.verb) {
    case "approve":
    case "deny":
      return `Deciding a proposal takes get and approve on artifactproposals and patch on artifactproposals/status in ${namespace}; the chart's ${approverRole} ClusterRole grants them. A cluster admin can bind it:\n${bind}`;
    case "diff":
    case "status":
      return `Reading proposals and appliances takes get and list on them in ${namespace}; the chart's ${approverRole} ClusterRole grants that. A cluster admin can bind it:\n${bind}`;
    case "dream-now":
      return `Asking for a dream takes get and patch on dreamschedules in ${namespace}, which no ClusterRole of the chart grants to people. A namespace admin can grant it:\n  kubectl create role remram-dreamer --verb=get,patch --resource=dreamschedules.remram.io -n ${namespace}\n  kubectl create rolebinding remram-dreamer ${subjectFlag(who)} --role=remram-dreamer -n ${namespace}`;
    case "export":
    case "check":
    case "backup":
    case "restore":
      return `kubectl remram ${command.verb} reads Cortex's admin credential and forwards a port to the Cortex pod: get on secrets, list on pods and create on pods/portforward in ${namespace}. Kubernetes' admin ClusterRole has them; a cluster admin can bind it:
  kubectl create rolebinding remram-admin-${bindingName(who).replace(`${approverRole}-`, "")} --clusterrole=admin ${subjectFlag(who)} -n ${namespace}`;
    case "user": {
      // Kubernetes' admin ClusterRole has the ServiceAccount and RoleBinding verbs, remram-household-admin reads
      // the appliance; binding the chart's roles also takes holding their rules or `bind` on them (RBAC's
      // escalation check), which neither gives for remram-approver.
      const slug = slugOf(who);
      const subject = `${subjectFlag(who)} -n ${namespace}`;
      return `Managing household credentials takes, in ${namespace}: get, create and delete on serviceaccounts, create on serviceaccounts/token, get, list, create and delete on rolebindings, get on remramappliances, and bind on the ClusterRoles remram-member, remram-approver and remram-household-admin (or holding what they grant). A cluster admin can run it, or grant it:
  kubectl create rolebinding remram-admin-${slug} --clusterrole=admin ${subject}
  kubectl create rolebinding remram-household-admin-${slug} --clusterrole=remram-household-admin ${subject}
  kubectl create clusterrole remram-household-binder --verb=bind --resource=clusterroles --resource-name=remram-member --resource-name=remram-approver --resource-name=remram-household-admin
  kubectl create rolebinding remram-household-binder-${slug} --clusterrole=remram-household-binder ${subject}`;
    }
    case "knowledge":
      return `Without --app-url, kubectl remram knowledge uses the front door the appliance publishes (status.gateway.appUrl, when spec.gateway.expose is an Ingress), else forwards a port to the remram-app pod: list on pods and create on pods/portforward in ${namespace}, which a household member's own credential does not have. Give the app's address instead: --app-url https://HOST/remram/, or --app-url http://127.0.0.1:8080/remram/ beside a kubectl port-forward to the app run by someone who may.`;
    default:
      return `Ask a cluster admin for the permission named above.`;
  }
}

/** The parts of the API server's "forbidden" message: `User "x" cannot get resource "y" in API group "z" ...`. */
export function parseForbidden(
  message: string,
): { user: string; verb: string; resource: string; group: string; namespace?: string } | undefined {
  const match =
    /User "([^"]+)" cannot (\S+) resource "([^"]+)"(?: in API group "([^"]*)")?(?: in the namespace "([^"]+)")?/.exec(
      message,
    );
  if (!match) return undefined;
  const [, user, verb, resource, group, namespace] = match as unknown as [
    string,
    string,
    string,
    string,
    string?,
    string?,
  ];
  return { user, verb, resource, group: group ?? "", ...(namespace ? { namespace } : {}) };
}

function forbidden(error: KubeApiError, context: ErrorContext): string {
  const denied = parseForbidden(error.message);
  if (denied) {
    const resource = denied.group ? `${denied.resource} (API group ${denied.group})` : denied.resource;
    const where = denied.namespace ? ` in namespace ${denied.namespace}` : " cluster-wide";
    return `forbidden: ${denied.user} may not ${denied.verb} ${resource}${where}.\n${grantHint(context.command, context.namespace, denied.user)}`;
  }
  // Admission (the approval policy) refuses with 403 too; its message says why.
  const policy = /ValidatingAdmissionPolicy '([^']+)'.*?denied request: (.*)$/s.exec(error.message);
  if (policy) return `refused by the admission policy ${policy[1]}: ${policy[2]}`;
  return `forbidden: ${error.message}\n${grantHint(context.command, context.namespace)}`;
}

const tlsCodes = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_HAS_EXPIRED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

const networkCodes = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ECONNRESET",
]);

/** A socket or TLS failure before the API server answered. */
function unreachable(code: string, context: ErrorContext): string {
  const server = context.server ?? "the API server";
  const check = `Check the cluster your kubeconfig points at: kubectl config view --minify${context.contextName ? ` (context "${context.contextName}"; --context picks another)` : ""}, or --kubeconfig / $KUBECONFIG for another file.`;
  if (code === "ECONNREFUSED")
    return `cannot reach the API server at ${server}: connection refused. Is the cluster running (on a k3s box: systemctl status k3s)?\n${check}`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN")
    return `cannot reach the API server at ${server}: its host name does not resolve (${code}).\n${check}`;
  if (code === "ETIMEDOUT" || code === "EHOSTUNREACH" || code === "ENETUNREACH" || code === "TIMEOUT")
    return `cannot reach the API server at ${server}: no answer (${code === "TIMEOUT" ? "timed out" : code}). Is the network to it up?\n${check}`;
  if (code === "ECONNRESET")
    return `the API server at ${server} closed the connection (ECONNRESET).\n${check}`;
  if (tlsCodes.has(code))
    return `the API server at ${server} presented a certificate your kubeconfig does not trust (${code}): check the cluster's certificate-authority-data.\n${check}`;
  return `cannot reach the API server at ${server} (${code}).\n${check}`;
}

/** The message for any failure of a command. */
export function explain(error: unknown, context: ErrorContext): string {
  if (error instanceof CliError) return error.message;
  if (error instanceof KubeApiError) {
    if (error.status === 401)
      return `the API server at ${context.server ?? "?"} did not accept your credentials (401 Unauthorized): they may have expired; log in again or check the user of ${context.contextName ? `context "${context.contextName}"` : "your context"} (kubectl config view --minify).`;
    if (error.status === 403) return forbidden(error, context);
    if (error.status === 409 || error.status === 422) return `refused by the API server: ${error.message}`;
    return `${error.status} ${error.reason}: ${error.message}`;
  }
  const code = (error as { code?: unknown } | undefined)?.code;
  if (typeof code === "string" && (networkCodes.has(code) || tlsCodes.has(code)))
    return unreachable(code, context);
  if (error instanceof Error && /timed out/.test(error.message)) return unreachable("TIMEOUT", context);
  return error instanceof Error ? error.message : String(error);
}

/** The list of a remram.io kind answered 404: the API server does not serve the kind at all. */
export function notInstalled(resource: string): string {
  return `this cluster does not serve ${resource}.remram.io: the Remram CRDs are not installed (the remram-operator Helm chart installs them), or the kubeconfig points at another cluster`;
}

export interface ExistingName {
  name: string;
  /** A proposal's phase, say. */
  detail?: string;
}

/** `no ArtifactProposal "x" in namespace y`, and what there is instead when the list could be read. */
export function unknownName(
  kind: string,
  name: string,
  namespace: string,
  existing: readonly ExistingName[] | undefined,
): string {
  const head = `no ${kind} "${name}" in namespace ${namespace}`;
  if (existing === undefined) return head;
  if (existing.length === 0) return `${head}; there is none there (another namespace? -n NAMESPACE)`;
  const shown = existing
    .slice(0, 20)
    .map((item) => (item.detail ? `${item.name} (${item.detail})` : item.name))
    .join(", ");
  return `${head}; there ${existing.length === 1 ? "is" : "are"}: ${shown}${existing.length > 20 ? `, and ${existing.length - 20} more` : ""}`;
}

export interface KubeconfigFacts {
  /** --kubeconfig */
  flag?: string;
  /** $KUBECONFIG */
  env?: string;
  home: string;
  inCluster: boolean;
  exists: (path: string) => boolean;
  /** The path-list delimiter (':', ';' on Windows). */
  delimiter: string;
}

/** Why no kubeconfig can be loaded, or undefined when one can (client-node then loads it). */
export function kubeconfigProblem(facts: KubeconfigFacts): string | undefined {
  if (facts.flag !== undefined)
    return facts.exists(facts.flag)
      ? undefined
      : `the kubeconfig ${facts.flag} (--kubeconfig) does not exist`;
  const listed = (facts.env ?? "").split(facts.delimiter).filter((path) => path !== "");
  if (listed.length > 0)
    return listed.some(facts.exists)
      ? undefined
      : `no kubeconfig: none of the files in $KUBECONFIG exists (${listed.join(facts.delimiter)})`;
  const home = `${facts.home}/.kube/config`;
  if (facts.exists(home) || facts.inCluster) return undefined;
  return `no kubeconfig: $KUBECONFIG is not set and ${home} does not exist. Pass --kubeconfig FILE or set KUBECONFIG (on a k3s box the admin's is /etc/rancher/k3s/k3s.yaml).`;
}

/** Why the context cannot be used, or undefined. */
export function contextProblem(
  wanted: string | undefined,
  current: string,
  contexts: readonly string[],
): string | undefined {
  const list = contexts.length > 0 ? `it has: ${contexts.join(", ")}` : "it has none";
  if (wanted !== undefined && !contexts.includes(wanted))
    return `no context "${wanted}" in the kubeconfig; ${list}`;
  if (wanted === undefined && (current === "" || !contexts.includes(current)))
    return `the kubeconfig has no current context; pick one with --context (${list})`;
  return undefined;
}

/** What a SelfSubjectAccessReview said no to, in the words of a forbidden answer. */
export function missingPermission(
  user: string,
  access: { verb: string; resource: string; subresource?: string },
  command: Command,
  namespace: string,
): string {
  const resource = `${access.resource}${access.subresource ? `/${access.subresource}` : ""}`;
  return `forbidden: ${user} may not ${access.verb} ${resource} (API group remram.io) in namespace ${namespace}.\n${grantHint(command, namespace, user)}`;
}
