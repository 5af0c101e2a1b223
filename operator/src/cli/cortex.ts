/**
 * kubectl-remram's way to Cortex: as Cortex's admin caller, with the credential in `<appliance>-cortex-admin` read
 * with your own Kubernetes identity, over a port-forward to a ready Cortex pod (what `kubectl port-forward` does).
 * The forward enters the pod's network namespace through the kubelet, so Cortex's NetworkPolicy, which admits only
 * the gateway and the operator, stays closed to everything else. Nothing is listened on locally.
 */
import { request as httpRequest } from "node:http";
import { Duplex, PassThrough } from "node:stream";
import { PortForward } from "@kubernetes/client-node";
import { cortexCredentialKey } from "../appliance/children/cortex.js";
import { ports } from "../appliance/children/shared.js";
import type { Cluster } from "./cluster.js";
import type { Command } from "./commands.js";
import { CliError, grantHint } from "./errors.js";

interface PodList {
  items: {
    metadata: { name: string };
    status?: { phase?: string; conditions?: { type: string; status: string }[] };
  }[];
}

/** The first Running, Ready Cortex pod of the appliance. */
async function readyCortexPod(cluster: Cluster, appliance: string): Promise<string> {
  const selector = `app.kubernetes.io/instance=${appliance},app.kubernetes.io/name=cortex`;
  const pods = await cluster.client.send<PodList>("GET", `/api/v1/namespaces/${cluster.namespace}/pods`, {
    query: { labelSelector: selector },
  });
  const ready = pods.items.find(
    (pod) =>
      pod.status?.phase === "Running" &&
      pod.status.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True"),
  );
  if (ready === undefined) {
    const seen = pods.items.map((pod) => `${pod.metadata.name} (${pod.status?.phase ?? "no status"})`);
    throw new CliError(
      `no ready Cortex pod for appliance ${appliance} in namespace ${cluster.namespace}` +
        (seen.length === 0
          ? " (none at all: is the appliance reconciled? kubectl remram status)"
          : `: ${seen.join(", ")}`),
    );
  }
  return ready.metadata.name;
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

export interface CortexAnswer {
  status: number;
  body: string;
}

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
  const toPod = new PassThrough();
  const fromPod = new PassThrough();
  const forwardErrors: Buffer[] = [];
  const errors = new PassThrough().on("data", (chunk: Buffer) => forwardErrors.push(chunk));
  const socket = await new PortForward(cluster.kubeConfig)
    .portForward(cluster.namespace, pod, [ports.cortex], fromPod, errors, toPod)
    .catch((error: unknown) => {
      // client-node rejects with the WebSocket's error event, whose message is all the upgrade's refusal says
      // ("Unexpected server response: 403"): a 403 is the missing pods/portforward right.
      const event = error as { message?: unknown } | undefined;
      const message = typeof event?.message === "string" ? event.message : String(error);
      throw new CliError(
        /\b403\b/.test(message)
          ? `forbidden: you may not create pods/portforward in namespace ${cluster.namespace} (the port-forward to ${pod} was refused: ${message}).\n${grantHint(command, cluster.namespace)}`
          : `cannot forward a port to ${pod}: ${message}`,
      );
    });
  const closeForward = () => (typeof socket === "function" ? socket() : socket)?.close();
  const payload = body === undefined ? undefined : JSON.stringify(body);
  try {
    return await new Promise<CortexAnswer>((resolve, reject) => {
      const request = httpRequest(
        {
          method,
          path,
          host: "cortex",
          createConnection: () => Duplex.from({ readable: fromPod, writable: toPod }),
          headers: {
            authorization: `Bearer ${token}`,
            connection: "close",
            ...(payload === undefined
              ? {}
              : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
          },
          timeout: timeoutMs,
        },
        (response) => {
          const chunks: Buffer[] = [];
          response.on("data", (chunk: Buffer) => chunks.push(chunk));
          response.on("end", () =>
            resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
          );
          response.on("error", reject);
        },
      );
      request.on("timeout", () =>
        request.destroy(new Error(`Cortex did not answer within ${timeoutMs / 1000} s`)),
      );
      request.on("error", (error) => {
        const forward = Buffer.concat(forwardErrors).toString("utf8").trim();
        reject(
          new CliError(`the port-forward to ${pod} failed: ${forward === "" ? error.message : forward}`),
        );
      });
      request.end(payload);
    });
  } finally {
    closeForward();
  }
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
