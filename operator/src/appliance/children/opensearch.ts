/** The embedded OpenSearch: a single-node StatefulSet with its data claim template, a Service and a headless one. */
import type { KubeObject } from "../../runtime/kube-client.js";
import { quantityToMiB } from "../hardware-profiles.js";
import {
  type ApplianceContext,
  childLabels,
  childMeta,
  childName,
  childService,
  ports,
  resourcesOf,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  selectorLabels,
} from "./shared.js";

/** path.repo of the embedded node: on its data volume, so a snapshot survives the pod and `kubectl cp` reaches it. */
export const embeddedSnapshotsDir = "/usr/share/opensearch/data/snapshots";

/** The init container reads the host's vm.max_map_count (not namespaced) into its termination message. */
export const hostCheckContainer = "host-check";

export function buildOpenSearch(ctx: ApplianceContext): KubeObject[] {
  if (ctx.spec.opensearch.mode === "external") return [];
  const profile = ctx.profile.opensearch;
  const heapMiB = ctx.spec.opensearch.heap
    ? quantityToMiB(ctx.spec.opensearch.heap)
    : Math.floor(quantityToMiB(profile.resources.memory) / 2);
  const storage = ctx.spec.opensearch.storage ?? { size: profile.storage };
  const retain = ctx.spec.persistentVolumeClaimRetentionPolicy.whenDeleted;
  const statefulSet = {
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: childMeta(ctx, "opensearch"),
    spec: {
      serviceName: childName(ctx.name, "opensearch-headless"),
      replicas: 1,
      selector: { matchLabels: selectorLabels(ctx.name, "opensearch") },
      persistentVolumeClaimRetentionPolicy: { whenDeleted: retain, whenScaled: "Retain" },
      template: {
        metadata: { labels: childLabels(ctx.name, "opensearch") },
        spec: {
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(1000),
          initContainers: [
            {
              name: hostCheckContainer,
              image: ctx.images.opensearch,
              command: ["sh", "-c", "cat /proc/sys/vm/max_map_count > /dev/termination-log"],
              securityContext: restrictedContainerSecurity(),
              resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { memory: "64Mi" } },
            },
          ],
          containers: [
            {
              name: "opensearch",
              image: ctx.spec.opensearch.image ?? ctx.images.opensearch,
              env: [
                { name: "cluster.name", value: ctx.name },
                { name: "discovery.type", value: "single-node" },
                { name: "bootstrap.memory_lock", value: "false" },
                // Snapshots to a shared-filesystem repository on the data volume: how a household moves its knowledge
                // to a bigger cluster (docs/operator.md, "Moving to an external OpenSearch").
                { name: "path.repo", value: embeddedSnapshotsDir },
                { name: "OPENSEARCH_JAVA_OPTS", value: `-Xms${heapMiB}m -Xmx${heapMiB}m` },
                // Plain HTTP inside the namespace; the NetworkPolicy admits only Cortex on 9200.
                { name: "DISABLE_SECURITY_PLUGIN", value: "true" },
                { name: "DISABLE_INSTALL_DEMO_CONFIG", value: "true" },
              ],
              ports: [{ name: "http", containerPort: ports.opensearch }],
              readinessProbe: {
                httpGet: { path: "/_cluster/health?local=true", port: "http" },
                periodSeconds: 10,
                failureThreshold: 6,
              },
              resources: resourcesOf(profile.resources),
              // OpenSearch writes logs and keystore under its install dir; the root file system stays writable.
              securityContext: restrictedContainerSecurity(false),
              volumeMounts: [{ name: "data", mountPath: "/usr/share/opensearch/data" }],
            },
          ],
        },
      },
      volumeClaimTemplates: [
        {
          metadata: { name: "data", labels: childLabels(ctx.name, "opensearch") },
          spec: {
            accessModes: ["ReadWriteOnce"],
            resources: { requests: { storage: storage.size } },
            ...(storage.storageClassName ? { storageClassName: storage.storageClassName } : {}),
          },
        },
      ],
    },
  };
  return [
    statefulSet as unknown as KubeObject,
    childService(ctx, "opensearch"),
    childService(ctx, "opensearch", true),
  ];
}
