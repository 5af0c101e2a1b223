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

/** The named appliance, the namespace's only one, or the caller's own as a member; undefined when none is known. */
export async function applianceFor(cluster: Cluster, named: string | undefined): Promise<string | undefined> {
  if (named !== undefined) return named;
  try {
    const list = await cluster.client.send<{ items: { metadata: { name: string } }[] }>(
      "GET",
      remramPath(cluster.namespace, "remramappliances"),
    );
    const names = list.items.map((item) => item.metadata.name);
    if (names.length > 1)
      throw new CliError(
        `namespace ${cluster.namespace} has several appliances (${names.join(", ")}): pick one with --appliance`,
      );
    return names[0];
  } catch (error) {
    // A member may get their appliance but not list them.
    if (!(error instanceof KubeApiError) || error.status !== 403) throw error;
    return applianceOfMember(await whoAmI(cluster.client), cluster.namespace);
  }
}

/** The appliance's published front door for the app, if it has one and the caller may read the appliance. */
export async function frontDoor(cluster: Cluster, appliance: string): Promise<FrontDoor | undefined> {
  try {
    const found = await cluster.client.send<{
      status?: { gateway?: { appUrl?: string; caCertificate?: string } };
    }>("GET", remramPath(cluster.namespace, "remramappliances", appliance));
    const gateway = found.status?.gateway;
    if (gateway?.appUrl === undefined) return undefined;
    return {
      url: gateway.appUrl,
      ...(gateway.caCertificate === undefined ? {} : { ca: gateway.caCertificate }),
    };
  } catch (error) {
    if (error instanceof KubeApiError && (error.status === 403 || error.status === 404)) return undefined;
    throw error;
  }
}
