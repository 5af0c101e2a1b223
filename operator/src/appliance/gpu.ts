/**
 * Whether Ollama runs on the GPU, under which RuntimeClass, and whether the NVIDIA device plugin is needed (pure).
 *
 * The operator never creates a RuntimeClass: it is node-level setup that belongs to whoever set up the node. k3s
 * installs `nvidia` (handler `nvidia`) from its packaged runtimes manifest on every server (k3s-io/k3s#8700), and
 * gives containerd the `nvidia` handler when it finds the NVIDIA container toolkit at start. So the RuntimeClass
 * alone does not prove the node can run it: where the GPU nodes report their runtime handlers (kubelet >= 1.30 on
 * containerd >= 2.0, `status.runtimeHandlers`), the RuntimeClass's handler must be among them.
 */
import type { RemramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { type GpuInventory, gpuHardwareLabels, type NodeLike } from "./hardware-profiles.js";

export const defaultRuntimeClassName = "nvidia";

/** The extended resource the NVIDIA device plugin advertises and GPU pods ask for (and tolerate as a taint). */
export const gpuResource = "nvidia.com/gpu";

export function runtimeClassNameOf(spec: Pick<RemramApplianceSpec, "ollama">): string {
  return spec.ollama.runtimeClassName ?? defaultRuntimeClassName;
}

/** The fields of a node.k8s.io/v1 RuntimeClass the decision reads. */
export interface RuntimeClassLike {
  metadata: { name: string };
  handler?: string;
}

/** A node as the GPU decision reads it: NodeLike plus its name and the runtime handlers the kubelet reports. */
export interface GpuNodeLike extends NodeLike {
  metadata?: NodeLike["metadata"] & { name?: string };
  status?: NodeLike["status"] & { runtimeHandlers?: { name?: string }[] };
}

/** How the RuntimeClass for GPU pods stands on this cluster. */
export type RuntimeClassState =
  | { name: string; status: "Found"; handler: string }
  | { name: string; status: "NotFound" }
  /** It exists, but every GPU node lists its runtime handlers and none has this one. */
  | { name: string; status: "HandlerMissing"; handler: string; nodes: string[] };

function isGpuNode(node: GpuNodeLike): boolean {
  if (node.spec?.unschedulable) return false;
  const labels = node.metadata?.labels ?? {};
  const gpus = Number.parseInt(node.status?.allocatable?.[gpuResource] ?? "0", 10);
  return gpus > 0 || gpuHardwareLabels.some((label) => labels[label] === "true");
}

export function runtimeClassState(
  name: string,
  runtimeClass: RuntimeClassLike | undefined,
  nodes: readonly GpuNodeLike[],
): RuntimeClassState {
  if (runtimeClass === undefined) return { name, status: "NotFound" };
  const handler = runtimeClass.handler ?? name;
  const gpuNodes = nodes.filter(isGpuNode);
  // A node that reports no handlers (an older kubelet, containerd 1.x) cannot tell: the RuntimeClass is trusted.
  const allReport = gpuNodes.every((node) => (node.status?.runtimeHandlers?.length ?? 0) > 0);
  const anyHas = gpuNodes.some((node) => node.status?.runtimeHandlers?.some((each) => each.name === handler));
  if (gpuNodes.length > 0 && allReport && !anyHas) {
    return {
      name,
      status: "HandlerMissing",
      handler,
      nodes: gpuNodes.map((node) => node.metadata?.name ?? "?"),
    };
  }
  return { name, status: "Found", handler };
}

/** What `hardwareProfile: auto` sizes for: a GPU that pods cannot reach through the RuntimeClass counts as none. */
export function usableGpuInventory(
  mode: RemramApplianceSpec["ollama"]["gpu"],
  inventory: GpuInventory,
  runtimeClass: RuntimeClassState,
): GpuInventory {
  return runtimeClass.status === "Found" || mode === "disabled" ? inventory : { ...inventory, count: 0 };
}

export interface GpuDecision {
  /** Ollama asks for one nvidia.com/gpu under the RuntimeClass. */
  useGpu: boolean;
  /** Apply the NVIDIA device plugin DaemonSet (its pods run under the RuntimeClass too). */
  devicePlugin: boolean;
}

export function decideGpu(input: {
  mode: RemramApplianceSpec["ollama"]["gpu"];
  inventory: GpuInventory;
  runtimeClass: RuntimeClassState;
  /** The profile in effect runs Ollama on a GPU (cpu-only does not). */
  profileUsesGpu: boolean;
}): GpuDecision {
  const { mode, inventory } = input;
  if (mode === "disabled") return { useGpu: false, devicePlugin: false };
  const usable = input.runtimeClass.status === "Found";
  // required keeps asking for the GPU under the named RuntimeClass, so its pods wait (refused by admission while the
  // RuntimeClass is missing) and GPUAvailable names what is missing; auto falls back to the CPU instead.
  const useGpu = mode === "required" || (usable && inventory.count > 0 && input.profileUsesGpu);
  // The plugin is for NVIDIA hardware no node advertises yet; without a usable runtime its pods could not start.
  const devicePlugin = usable && inventory.count === 0 && (inventory.hardwareLabelled || mode === "required");
  return { useGpu, devicePlugin };
}
