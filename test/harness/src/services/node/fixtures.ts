/**
 * Pods for real-node suites: busybox under the restricted Pod Security Standard, placed on the real node only.
 */
import type { RealNodeEndpoints } from "../types.js";

/** A restricted busybox pod on the real node running `script`, with the claim `claim` at /data if given. */
export function busyboxPod(
  node: RealNodeEndpoints,
  name: string,
  labels: Record<string, string>,
  script: string,
  claim?: string,
): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels },
    spec: {
      nodeSelector: node.nodeSelector,
      tolerations: node.tolerations,
      terminationGracePeriodSeconds: 1,
      volumes: claim ? [{ name: "data", persistentVolumeClaim: { claimName: claim } }] : [],
      securityContext: { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: "RuntimeDefault" } },
      containers: [
        {
          name: "main",
          image: node.images.busybox,
          imagePullPolicy: "Never",
          command: ["sh", "-c", script],
          securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] } },
          volumeMounts: claim ? [{ name: "data", mountPath: "/data" }] : [],
        },
      ],
    },
  };
}

/** busybox's httpd serving `body` on port 8080 (from /tmp: the pod runs as nobody). */
export const httpdScript = (body: string): string =>
  `mkdir -p /tmp/www && echo ${body} > /tmp/www/index.html && exec httpd -f -p 8080 -h /tmp/www`;
