// kwok's fake nodes: the Node objects the kwok tier creates and the wait until the scheduler can use one.
import { waitFor } from "../wait.js";
import { kubeRequest } from "./kube-request.js";
import type { KubernetesEndpoints } from "./types.js";

/** Annotation that puts a Node under this test bed's kwok (and only those: real nodes are never touched). */
export const kwokNodeAnnotation = "kwok.x-k8s.io/node";
export const kwokNodeAnnotationValue = "fake";

export interface KwokNodeSpec {
  name: string;
  /** CPU capacity as a quantity, e.g. "8". */
  cpu: string;
  /** Memory capacity as a quantity, e.g. "32Gi". */
  memory: string;
  /** NVIDIA GPUs advertised as the extended resource nvidia.com/gpu, as the device plugin would. */
  gpu?: number;
  pods?: number;
  labels?: Readonly<Record<string, string>>;
  taints?: readonly {
    key: string;
    value?: string;
    effect: "NoSchedule" | "PreferNoSchedule" | "NoExecute";
  }[];
}

/** The subset of a core/v1 Node the harness writes and reads. */
export interface NodeObject {
  apiVersion: "v1";
  kind: "Node";
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: { taints?: { key: string; value?: string; effect: string }[] };
  status?: {
    capacity?: Record<string, string>;
    allocatable?: Record<string, string>;
    conditions?: { type: string; status: string; lastHeartbeatTime?: string }[];
  };
}

/**
 * A Node for kwok: capacity and allocatable are set at creation (the node-initialize stage keeps them) and the
 * annotation hands it to this test bed's kwok, which marks it Ready and runs the pods bound to it.
 */
export function kwokNodeManifest(spec: KwokNodeSpec): NodeObject {
  const resources: Record<string, string> = {
    cpu: spec.cpu,
    memory: spec.memory,
    pods: String(spec.pods ?? 110),
    ...(spec.gpu !== undefined && spec.gpu > 0 ? { "nvidia.com/gpu": String(spec.gpu) } : {}),
  };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: spec.name,
      annotations: { [kwokNodeAnnotation]: kwokNodeAnnotationValue },
      labels: {
        "kubernetes.io/hostname": spec.name,
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        type: "kwok",
        ...spec.labels,
      },
    },
    spec: spec.taints ? { taints: spec.taints.map((taint) => ({ ...taint })) } : {},
    status: { capacity: resources, allocatable: { ...resources } },
  };
}

/** Ready, and the node lifecycle controller has lifted the not-ready taint, so the scheduler will use it. */
export function nodeSchedulable(node: NodeObject): boolean {
  const ready = node.status?.conditions?.some(
    (condition) => condition.type === "Ready" && condition.status === "True",
  );
  const notReadyTaint = node.spec?.taints?.some((taint) => taint.key === "node.kubernetes.io/not-ready");
  return ready === true && notReadyTaint !== true;
}

/** Create a kwok-managed Node and resolve once the scheduler can place pods on it. */
export async function createKwokNode(
  endpoints: Pick<KubernetesEndpoints, "server" | "token">,
  spec: KwokNodeSpec,
  timeoutMs = 60_000,
): Promise<NodeObject> {
  const created = await kubeRequest(endpoints, "POST", "/api/v1/nodes", kwokNodeManifest(spec));
  if (created.status !== 201)
    throw new Error(`creating node ${spec.name} failed: ${created.status} ${created.body}`);
  return waitFor(
    async () => {
      const response = await kubeRequest(endpoints, "GET", `/api/v1/nodes/${spec.name}`);
      if (response.status !== 200) return undefined;
      const node = JSON.parse(response.body) as NodeObject;
      return nodeSchedulable(node) ? node : undefined;
    },
    { what: `kwok node ${spec.name} Ready and untainted`, timeoutMs, intervalMs: 200 },
  );
}

/** Delete a Node (kwok forgets it; pods bound to it are garbage-collected by the controller manager). */
export async function deleteKwokNode(
  endpoints: Pick<KubernetesEndpoints, "server" | "token">,
  name: string,
): Promise<void> {
  const response = await kubeRequest(endpoints, "DELETE", `/api/v1/nodes/${name}`);
  if (response.status !== 200 && response.status !== 404) {
    throw new Error(`deleting node ${name} failed: ${response.status} ${response.body}`);
  }
}
