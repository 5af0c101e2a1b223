/** The node-level NVIDIA device plugin, applied only when the GPU decision asks for it (see gpu.ts). */
import type { KubeObject } from "../../runtime/kube-client.js";
import { gpuResource } from "../gpu.js";
import { managedBy, type OperatorImages } from "./shared.js";

export const devicePluginNamespace = "kube-system";
export const devicePluginName = "remram-nvidia-device-plugin";

/**
 * The NVIDIA device plugin DaemonSet, run under the existing GPU RuntimeClass (the operator reads that one, k3s's
 * `nvidia` by default, and never creates one: see gpu.ts). It serves every GPU workload on the node, not one
 * appliance, and a namespaced appliance cannot own an object in another namespace: so it carries the managed-by
 * label but no ownerReference, and deleting an appliance leaves it. The plugin needs hostPath (kubelet's
 * device-plugin socket dir), which restricted namespaces forbid; it runs in kube-system.
 */
export function buildDevicePlugin(images: OperatorImages, runtimeClassName: string): KubeObject {
  const labels = {
    "app.kubernetes.io/name": "nvidia-device-plugin",
    "app.kubernetes.io/part-of": "remram",
    "app.kubernetes.io/managed-by": managedBy,
  };
  return {
    apiVersion: "apps/v1",
    kind: "DaemonSet",
    metadata: { name: devicePluginName, namespace: devicePluginNamespace, labels },
    spec: {
      selector: { matchLabels: { "app.kubernetes.io/name": "nvidia-device-plugin" } },
      updateStrategy: { type: "RollingUpdate" },
      template: {
        metadata: { labels },
        spec: {
          runtimeClassName,
          priorityClassName: "system-node-critical",
          tolerations: [{ key: gpuResource, operator: "Exists", effect: "NoSchedule" }],
          containers: [
            {
              name: "nvidia-device-plugin",
              image: images.devicePlugin,
              env: [{ name: "FAIL_ON_INIT_ERROR", value: "false" }],
              securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
              volumeMounts: [{ name: "device-plugin", mountPath: "/var/lib/kubelet/device-plugins" }],
            },
          ],
          volumes: [{ name: "device-plugin", hostPath: { path: "/var/lib/kubelet/device-plugins" } }],
        },
      },
    },
  } as KubeObject;
}
