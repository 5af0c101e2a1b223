/**
 * kubectl-remram's way to Cortex: as Cortex's admin caller, with the credential in `<appliance>-cortex-admin` read
 * with your own Kubernetes identity, over a port-forward to a ready Cortex pod (port-forward.ts). Cortex's
 * NetworkPolicy, which admits only the gateway and the operator, stays closed to everything else.
 */
import { cortexCredentialKey } from "../appliance/children/cortex.js";
import { ports } from "../appliance/children/shared.js";
import type { Cluster } from "./cluster.js";
import type { Command } from "./commands.js";
import { CliError } from "./errors.js";
import { type HttpAnswer, readyPods, requestThroughPod } from "./port-forward.js";

/** The first Running, Ready Cortex pod of the appliance. */
async function readyCortexPod(cluster: Cluster, appliance: string): Promise<string> {
  const selector = `app.kubernetes.io/instance=${appliance},app.kubernetes.io/name=cortex`;
  const [first] = await readyPods(cluster, selector, `Cortex pod for appliance ${appliance}`);
  return (first as { name: string }).name;
}

async function adminCredential(cluster: Cluster, appliance: string): Promise<string> {
  const name = `${appliance}-cortex-admin`;
  const secret = await cluster.client.get<{ data?: Record<string, string> }>(
    `/api/v1/namespaces/${cluster.namespace}/secrets/${name}`,
  );
  const encoded = secret?.data?.[cortexCredentialKey];
  if (encoded === undefined)
    throw new CliError(
      `the Secret ${name} with Cortex's admin credential is not in namespace ${cluster.namespace}${secret === undefined ? "" : ` (it has no ${cortexCredentialKey} key)`}: is the appliance reconciled?`,
    );
  return Buffer.from(encoded, "base64").toString("utf8").trim();
}

export type CortexAnswer = HttpAnswer;

/** One HTTP request to the appliance's Cortex as its admin caller; the answer whatever its status. */
export async function callCortexAsAdmin(
  command: Pick<Command, "verb">,
  cluster: Cluster,
  appliance: string,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  timeoutMs = 120_000,
): Promise<CortexAnswer> {
  // The credential first: without the right to read it, nothing else is worth asking.
  const token = await adminCredential(cluster, appliance);
  const pod = await readyCortexPod(cluster, appliance);
  return requestThroughPod(command, cluster, pod, ports.cortex, {
    method,
    path,
    headers: { authorization: `Bearer ${token}` },
    ...(body === undefined ? {} : { body }),
    timeoutMs,
    peer: "Cortex",
  });
}
/** Ask Cortex (through the admin channel) and parse its answer with the contract's schema. */
export async function askCortex<T>(
  command: Command,
  cluster: Cluster,
  appliance: string,
  method: "GET" | "POST",
  path: string,
  schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error } },
  request: { body?: unknown; timeoutMs?: number } = {},
): Promise<T> {
  const answer = await callCortexAsAdmin(
    command,
    cluster,
    appliance,
    method,
    path,
    request.body,
    request.timeoutMs,
  );
  if (answer.status >= 300)
    throw new CliError(`Cortex of ${appliance} answered ${answer.status}: ${answer.body}`);
  const parsed = schema.safeParse(JSON.parse(answer.body));
  if (!parsed.success)
    throw new CliError(`Cortex of ${appliance} sent an unexpected answer: ${parsed.error.message}`);
  return parsed.data;
}
