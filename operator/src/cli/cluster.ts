/**
 * kubectl-remram's reads of the cluster: the kubeconfig (checked first, so a missing one is named as such), who
 * you are, what you may do, which names exist, and the operator's Deployments.
 */
import { existsSync } from "node:fs";
import { homedir } from "node:os";
import { delimiter } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { KubeApiError, KubeClient } from "../runtime/kube-client.js";
import type { Connection } from "./commands.js";
import type { NamedResource } from "./completion.js";
import {
  CliError,
  contextProblem,
  type ExistingName,
  type KubeconfigFacts,
  kubeconfigProblem,
  notInstalled,
  unknownName,
} from "./errors.js";
import { type OperatorDeployment, operatorSelector } from "./version.js";

export interface Cluster {
  client: KubeClient;
  /** For what the client does not do itself (a port-forward's WebSocket). */
  kubeConfig: KubeConfig;
  /** The API server's URL. */
  server: string;
  contextName: string;
  /** -n, else the context's namespace, else "default". */
  namespace: string;
}

function kubeconfigFacts(connection: Connection, env: NodeJS.ProcessEnv): KubeconfigFacts {
  return {
    ...(connection.kubeconfig !== undefined ? { flag: connection.kubeconfig } : {}),
    ...(env.KUBECONFIG !== undefined ? { env: env.KUBECONFIG } : {}),
    home: homedir(),
    inCluster: env.KUBERNETES_SERVICE_HOST !== undefined,
    exists: existsSync,
    delimiter,
  };
}

/** Load the kubeconfig kubectl would use; throws CliError naming what is missing. */
export function connect(connection: Connection, timeoutMs: number, env = process.env): Cluster {
  const problem = kubeconfigProblem(kubeconfigFacts(connection, env));
  if (problem !== undefined) throw new CliError(problem);
  const kubeConfig = new KubeConfig();
  try {
    if (connection.kubeconfig === undefined) kubeConfig.loadFromDefault();
    else kubeConfig.loadFromFile(connection.kubeconfig);
  } catch (error) {
    throw new CliError(
      `cannot read the kubeconfig: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
  const contexts = kubeConfig.getContexts().map((context) => context.name);
  const wrongContext = contextProblem(connection.context, kubeConfig.getCurrentContext(), contexts);
  if (wrongContext !== undefined) throw new CliError(wrongContext);
  if (connection.context !== undefined) kubeConfig.setCurrentContext(connection.context);
  const contextName = kubeConfig.getCurrentContext();
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new CliError(`context "${contextName}" names no cluster in the kubeconfig`);
  return {
    client: new KubeClient(kubeConfig, { fieldManager: "kubectl-remram", timeoutMs }),
    kubeConfig,
    server: cluster.server,
    contextName,
    namespace: connection.namespace ?? kubeConfig.getContextObject(contextName)?.namespace ?? "default",
  };
}

/** The kubeconfig's context names, for completing --context; none when there is no kubeconfig. */
export function contextNames(connection: Connection, env = process.env): string[] {
  if (kubeconfigProblem(kubeconfigFacts(connection, env)) !== undefined) return [];
  try {
    const kubeConfig = new KubeConfig();
    if (connection.kubeconfig === undefined) kubeConfig.loadFromDefault();
    else kubeConfig.loadFromFile(connection.kubeconfig);
    return kubeConfig.getContexts().map((context) => context.name);
  } catch {
    return [];
  }
}

export const remramPath = (namespace: string, resource: NamedResource, name?: string): string =>
  `/apis/remram.io/v1alpha1/namespaces/${encodeURIComponent(namespace)}/${resource}${name === undefined ? "" : `/${encodeURIComponent(name)}`}`;

export async function whoAmI(client: KubeClient): Promise<string> {
  const review = await client.create<{ status?: { userInfo?: { username?: string } } }>(
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  );
  const username = review.status?.userInfo?.username;
  if (!username) throw new CliError("the API server did not say who you are (SelfSubjectReview)");
  return username;
}

export interface Access {
  verb: string;
  /** remram.io when absent. */
  group?: string;
  resource: string;
  subresource?: string;
  name?: string;
  namespace: string;
}

/** Whether you may do `access` (SelfSubjectAccessReview); undefined when the review itself fails. */
export async function mayI(client: KubeClient, access: Access): Promise<boolean | undefined> {
  try {
    const review = await client.create<{ status?: { allowed?: boolean } }>(
      "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: { group: "remram.io", ...access } },
      },
    );
    return review.status?.allowed === true;
  } catch {
    return undefined;
  }
}

interface NamedObject {
  metadata: { name: string };
  status?: { phase?: string; conditions?: { type: string; status: string }[] };
}

/**
 * The names of `resource` in `namespace` (with a proposal's phase, an appliance's readiness); undefined when they
 * cannot be listed. Throws CliError when the kind itself is unknown to the API server.
 */
export async function existingNames(
  client: KubeClient,
  namespace: string,
  resource: NamedResource,
): Promise<ExistingName[] | undefined> {
  let list: { items: NamedObject[] } | undefined;
  try {
    list = await client.get<{ items: NamedObject[] }>(remramPath(namespace, resource));
  } catch {
    return undefined;
  }
  if (list === undefined) throw new CliError(notInstalled(resource));
  return list.items.map((item) => {
    const ready = item.status?.conditions?.find((condition) => condition.type === "Ready");
    const detail =
      resource === "artifactproposals" ? item.status?.phase : ready ? `Ready=${ready.status}` : undefined;
    return { name: item.metadata.name, ...(detail !== undefined ? { detail } : {}) };
  });
}

/** The household member ids of every appliance in `namespace`, for completing `user add|remove`. */
export async function householdMemberIds(
  client: KubeClient,
  namespace: string,
): Promise<{ member: string; appliance: string }[]> {
  const list = await client.get<{
    items: { metadata: { name: string }; spec?: { household?: { members?: { id?: unknown }[] } } }[];
  }>(remramPath(namespace, "remramappliances"));
  return (list?.items ?? []).flatMap((item) =>
    (item.spec?.household?.members ?? []).flatMap((member) =>
      typeof member.id === "string" ? [{ member: member.id, appliance: item.metadata.name }] : [],
    ),
  );
}

/** The namespaces you may list, for completing -n. */
export async function namespaceNames(client: KubeClient): Promise<string[]> {
  const list = await client.get<{ items: { metadata: { name: string } }[] }>("/api/v1/namespaces");
  return (list?.items ?? []).map((item) => item.metadata.name);
}

export async function kubernetesVersion(client: KubeClient): Promise<string | undefined> {
  return (await client.get<{ gitVersion?: string }>("/version"))?.gitVersion;
}

/** The chart's operator Deployments in every namespace, or why they cannot be listed. */
export async function operatorDeployments(
  client: KubeClient,
): Promise<OperatorDeployment[] | { error: string }> {
  try {
    const list = await client.send<{ items: OperatorDeployment[] }>("GET", "/apis/apps/v1/deployments", {
      query: { labelSelector: operatorSelector },
    });
    return list.items;
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 403)
      return { error: "you may not list Deployments in all namespaces" };
    return { error: error instanceof Error ? error.message : String(error) };
  }
}

const kinds: Record<NamedResource, string> = {
  artifactproposals: "ArtifactProposal",
  remramappliances: "RemramAppliance",
  dreamschedules: "DreamSchedule",
};

/** GET one object; a 404 names what exists instead. */
export async function readNamed<T>(cluster: Cluster, resource: NamedResource, name: string): Promise<T> {
  const object = await cluster.client.get<T>(remramPath(cluster.namespace, resource, name));
  if (object !== undefined) return object;
  const existing = await existingNames(cluster.client, cluster.namespace, resource);
  throw new CliError(unknownName(kinds[resource], name, cluster.namespace, existing));
}

/** The appliance named, or the only one in the namespace. */
export async function applianceName(cluster: Cluster, named: string | undefined): Promise<string> {
  if (named !== undefined) {
    await readNamed(cluster, "remramappliances", named);
    return named;
  }
  const existing = await existingNames(cluster.client, cluster.namespace, "remramappliances");
  if (existing === undefined)
    throw new CliError(`cannot list RemramAppliances in ${cluster.namespace}: name one with --appliance`);
  const [only, ...others] = existing;
  if (only === undefined)
    throw new CliError(
      `no RemramAppliance in namespace ${cluster.namespace} (another namespace? -n NAMESPACE)`,
    );
  if (others.length > 0)
    throw new CliError(
      `namespace ${cluster.namespace} has several RemramAppliances (${existing.map((item) => item.name).join(", ")}): pick one with --appliance`,
    );
  return only.name;
}
