/**
 * Where `kubectl remram knowledge` finds remram-app when --app-url is not given: the appliance's front door, as its
 * status publishes it (status.gateway.appUrl, with the CA that signed the host's certificate), which every member can
 * read; else the caller port-forwards to the app's pod, which only those with that right can do.
 */
import { KubeApiError } from "../runtime/kube-client.js";
import { type Cluster, remramPath, whoAmI } from "./cluster.js";
import { CliError } from "./errors.js";

/** The front door's address and the CA to trust for it besides the system's. */
export interface FrontDoor {
  url: string;
  ca?: string;
}

/**
 * A member's ServiceAccount is `<appliance>-member-<id>` (`kubectl remram user add`): the appliance of a caller who
 * may not list appliances, read from who they are.
 */
export function applianceOfMember(username: string, namespace: string): string | undefined {
  const prefix = `system:serviceaccount:${namespace}:`;
  if (!username.startsWith(prefix)) return undefined;
  return /^(.+)-member-[a-z0-9]([a-z0-9-]*[a-z0-9])?$/.exec(username.slice(prefix.length))?.[1];
}

interface ApplianceView {
  metadata: { name: string };
  status?: { gateway?: { appUrl?: string; caCertificate?: string } };
}

const readAppliance = async (cluster: Cluster, name: string): Promise<ApplianceView | undefined> => {
  try {
    return await cluster.client.send<ApplianceView>(
      "GET",
      remramPath(cluster.namespace, "remramappliances", name),
    );
  } catch (error) {
    if (error instanceof KubeApiError && (error.status === 403 || error.status === 404)) return undefined;
    throw error;
  }
};

/**
 * The named appliance, the namespace's only one, or the caller's own as a member, as the caller may read it; its
 * name alone when they may not read it, undefined when none is known.
 */
export async function applianceFor(
  cluster: Cluster,
  named: string | undefined,
): Promise<ApplianceView | undefined> {
  if (named !== undefined) return (await readAppliance(cluster, named)) ?? { metadata: { name: named } };
  try {
    const list = await cluster.client.send<{ items: ApplianceView[] }>(
      "GET",
      remramPath(cluster.namespace, "remramappliances"),
    );
    if (list.items.length > 1)
      throw new CliError(
        `namespace ${cluster.namespace} has several appliances (${list.items.map((item) => item.metadata.name).join(", ")}): pick one with --appliance`,
      );
    return list.items[0];
  } catch (error) {
    // A member may get their appliance but not list them.
    if (!(error instanceof KubeApiError) || error.status !== 403) throw error;
    const own = applianceOfMember(await whoAmI(cluster.client), cluster.namespace);
    return own === undefined ? undefined : readAppliance(cluster, own);
  }
}

/** The appliance's published front door for the app, if it has one. */
export function frontDoor(appliance: ApplianceView | undefined): FrontDoor | undefined {
  const gateway = appliance?.status?.gateway;
  if (gateway?.appUrl === undefined) return undefined;
  return {
    url: gateway.appUrl,
    ...(gateway.caCertificate === undefined ? {} : { ca: gateway.caCertificate }),
  };
}
