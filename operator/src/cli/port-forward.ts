/**
 * kubectl-remram's way into an appliance's pods: one HTTP request over a port-forward to a ready pod (what `kubectl
 * port-forward` does). The forward enters the pod's network namespace through the kubelet, so the appliance's
 * NetworkPolicies stay closed to everything else, and nothing is listened on locally. It takes list on pods and
 * create on pods/portforward in the namespace. cortex.ts reaches Cortex this way, knowledge-app.ts remram-app.
 */
import { request as httpRequest, type OutgoingHttpHeaders } from "node:http";
import { Duplex, PassThrough } from "node:stream";
import { PortForward } from "@kubernetes/client-node";
import type { Cluster } from "./cluster.js";
import type { Command } from "./commands.js";
import { CliError, grantHint } from "./errors.js";

interface PodList {
  items: {
    metadata: { name: string; labels?: Record<string, string> };
    status?: { phase?: string; conditions?: { type: string; status: string }[] };
  }[];
}

export interface ReadyPod {
  name: string;
  labels: Record<string, string>;
}

/**
 * The Running, Ready pods matching `selector`; none is an error that names `what` ("Cortex pod for appliance box")
 * and the pods seen instead.
 */
export async function readyPods(cluster: Cluster, selector: string, what: string): Promise<ReadyPod[]> {
  const pods = await cluster.client.send<PodList>("GET", `/api/v1/namespaces/${cluster.namespace}/pods`, {
    query: { labelSelector: selector },
  });
  const ready = pods.items.filter(
    (pod) =>
      pod.status?.phase === "Running" &&
      pod.status.conditions?.some((condition) => condition.type === "Ready" && condition.status === "True"),
  );
  if (ready.length === 0) {
    const seen = pods.items.map((pod) => `${pod.metadata.name} (${pod.status?.phase ?? "no status"})`);
    throw new CliError(
      `no ready ${what} in namespace ${cluster.namespace}` +
        (seen.length === 0
          ? " (none at all: is the appliance reconciled? kubectl remram status)"
          : `: ${seen.join(", ")}`),
    );
  }
  return ready.map((pod) => ({ name: pod.metadata.name, labels: pod.metadata.labels ?? {} }));
}

export interface PodRequest {
  method: "GET" | "POST";
  path: string;
  headers?: OutgoingHttpHeaders;
  /** A JSON body. */
  body?: unknown;
  timeoutMs: number;
  /** Who answers, for messages: "Cortex", "remram-app". */
  peer: string;
}

export interface HttpAnswer {
  status: number;
  body: string;
}

/** One HTTP request to `port` of `pod` through a port-forward; the answer whatever its status. */
export async function requestThroughPod(
  command: Pick<Command, "verb">,
  cluster: Cluster,
  pod: string,
  port: number,
  request: PodRequest,
): Promise<HttpAnswer> {
  const toPod = new PassThrough();
  const fromPod = new PassThrough();
  const forwardErrors: Buffer[] = [];
  const errors = new PassThrough().on("data", (chunk: Buffer) => forwardErrors.push(chunk));
  const socket = await new PortForward(cluster.kubeConfig)
    .portForward(cluster.namespace, pod, [port], fromPod, errors, toPod)
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
  const payload = request.body === undefined ? undefined : JSON.stringify(request.body);
  const { timeoutMs } = request;
  try {
    return await new Promise<HttpAnswer>((resolve, reject) => {
      const outgoing = httpRequest(
        {
          method: request.method,
          path: request.path,
          host: request.peer,
          createConnection: () => Duplex.from({ readable: fromPod, writable: toPod }),
          headers: {
            ...request.headers,
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
      outgoing.on("timeout", () =>
        outgoing.destroy(new Error(`${request.peer} did not answer within ${timeoutMs / 1000} s`)),
      );
      outgoing.on("error", (error) => {
        const forward = Buffer.concat(forwardErrors).toString("utf8").trim();
        reject(
          new CliError(`the port-forward to ${pod} failed: ${forward === "" ? error.message : forward}`),
        );
      });
      outgoing.end(payload);
    });
  } finally {
    closeForward();
  }
}
