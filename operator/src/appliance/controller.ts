/**
 * The RemramAppliance controller: it reconciles appliances, owns their workloads, Services, Secrets,
 * NetworkPolicies, the gateway's Ingress and remram-app's ServiceAccount, Role and RoleBinding (cert-manager's
 * objects, applied only where cert-manager is installed, are read without a cache), and watches what else changes an
 * appliance: its retained PVCs and OpenSearch pods (by the appliance label), nodes (GPU changes only), RuntimeClasses
 * and the ingress controller's EndpointSlices.
 */
import type { BackupAttachment, EmbeddingStatus, MigrationStatus, StorageStatus } from "@remram/contract";
import type { Cache } from "../runtime/cache.js";
import type { Controller } from "../runtime/controller.js";
import type { InformerEvent } from "../runtime/informer.js";
import type { KubeObject } from "../runtime/kube-client.js";
import type { Manager } from "../runtime/manager.js";
import { objectKey } from "../runtime/owner.js";
import * as kinds from "../runtime/resource-kinds.js";
import { type BackupCortex, ScheduledBackups } from "./backups.js";
import { applianceLabel, managedBy, type OperatorImages } from "./children/shared.js";
import { ConsistencyChecks, type RunConsistencyCheck } from "./consistency-check.js";
import { CortexWatch } from "./cortex-watch.js";
import { embeddingsStatus } from "./embedding-watch.js";
import type { GpuNodeLike, RuntimeClassLike } from "./gpu.js";
import type { HardwareProfile, ProfileName } from "./hardware-profiles.js";
import {
  endpointSliceSelector,
  type IngressControllerService,
  ingressProxiesOf,
} from "./ingress-controller.js";
import { migrationsStatus } from "./migration-watch.js";
import { ModelPuller } from "./model-puller.js";
import { ApplianceReconciler, type PodLike, type RemramAppliance } from "./reconciler.js";
import { applianceStorage } from "./storage.js";

/** Every child carries it; the child caches (and so the operator's reads) see only these. */
export const managedSelector = `app.kubernetes.io/managed-by=${managedBy}`;
const openSearchPodSelector = `${managedSelector},app.kubernetes.io/name=opensearch`;

/** Children the reconciler compares with what it builds. PVCs are among them but carry no ownerReference. */
const ownedKinds = [
  kinds.deployments,
  kinds.statefulSets,
  kinds.services,
  kinds.secrets,
  kinds.networkPolicies,
  kinds.ingresses,
  // remram-app's identity: its ServiceAccount, and the Role and RoleBinding that let it read its appliance.
  kinds.serviceAccounts,
  kinds.roles,
  kinds.roleBindings,
];
const childKinds = [...ownedKinds, kinds.persistentVolumeClaims];

export interface ApplianceControllerOptions {
  profiles: ReadonlyMap<ProfileName, HardwareProfile>;
  images: OperatorImages;
  /** Namespaces whose Prometheus may scrape appliance metrics (the chart's metrics.allowedNamespaces). */
  metricsNamespaces?: readonly string[];
  /** The operator's own namespace (its pods reach each appliance's Ollama through the NetworkPolicy). */
  operatorNamespace: string;
  ollamaUrl?: (appliance: { name: string; namespace: string }) => string;
  fetchImpl?: typeof fetch;
  /** The ingress controller's Service (the chart's ingressController): the gateway behind an Ingress trusts its pods. */
  ingressController?: IngressControllerService;
  /** How an appliance's data is checked (Cortex's /admin/check), and how often. */
  consistencyCheck?: { run: RunConsistencyCheck; intervalMs: number; ignoreDeployment?: boolean };
  /**
   * How an appliance's Cortex is asked whether its vectors are current (GET /admin/embeddings), whether an index
   * migration runs (GET /admin/migrations) and how much room it has left (GET /admin/storage).
   */
  cortexReadings?: {
    embeddings: (namespace: string, name: string) => Promise<EmbeddingStatus>;
    migrations: (namespace: string, name: string) => Promise<MigrationStatus>;
    storage: (namespace: string, name: string) => Promise<StorageStatus>;
    ignoreDeployment?: boolean;
  };
  /** How an appliance's Cortex is asked for backups (spec.backup's schedule decides when). */
  backups?: {
    cortexFor: (namespace: string, name: string) => Promise<BackupCortex>;
    attachmentsFor?: (namespace: string, name: string) => Promise<BackupAttachment[]>;
    ignoreDeployment?: boolean;
  };
}

/** What of a node matters to appliances: GPU allocatable, GPU labels, schedulability, runtime handlers. */
export function gpuFingerprint(node: GpuNodeLike): string {
  const labels = Object.entries(node.metadata?.labels ?? {})
    .filter(([key]) => key.startsWith("nvidia.com/") || key === "feature.node.kubernetes.io/pci-10de.present")
    .sort();
  return JSON.stringify([
    node.status?.allocatable?.["nvidia.com/gpu"] ?? "0",
    labels,
    node.spec?.unschedulable ?? false,
    (node.status?.runtimeHandlers ?? []).map((handler) => handler.name ?? ""),
  ]);
}

/**
 * Nodes change GPU availability and the auto profile of every appliance, but heartbeats (status updates every
 * few seconds per node) must not wake every appliance: only a changed GPU fingerprint does.
 */
export function onGpuChange(
  everyAppliance: () => string[],
): (node: KubeObject & GpuNodeLike, event: InformerEvent) => string[] {
  const fingerprints = new Map<string, string>();
  return (node, event) => {
    const fingerprint = event === "delete" ? "" : gpuFingerprint(node);
    if (fingerprints.get(node.metadata.name) === fingerprint) return [];
    if (event === "delete") fingerprints.delete(node.metadata.name);
    else fingerprints.set(node.metadata.name, fingerprint);
    return everyAppliance();
  };
}

/** Objects without an ownerReference (retained PVCs, the StatefulSet's pods) name their appliance by label. */
export function applianceOfLabel(object: KubeObject): string[] {
  const appliance = object.metadata.labels?.[applianceLabel];
  return appliance ? [objectKey(object.metadata.namespace, appliance)] : [];
}

export function setupApplianceController(manager: Manager, options: ApplianceControllerOptions): Controller {
  const appliances = manager.cache<RemramAppliance>(kinds.remramAppliances);
  const children = new Map<string, Cache<KubeObject>>(
    childKinds.map((kind) => [kind.kind, manager.cache(kind, managedSelector)]),
  );
  const models = new ModelPuller(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {});
  // The ingress controller's EndpointSlices, watched in its namespace alone (the chart's ingressController).
  const ingressController = options.ingressController;
  const ingressSlices = ingressController && {
    kind: kinds.endpointSlices,
    labelSelector: endpointSliceSelector(ingressController),
    namespace: ingressController.namespace,
  };
  const ingressSliceCache =
    ingressSlices && manager.cache(ingressSlices.kind, ingressSlices.labelSelector, ingressSlices.namespace);
  const readings = options.cortexReadings;
  const watching = {
    ...(readings?.ignoreDeployment === undefined ? {} : { ignoreDeployment: readings.ignoreDeployment }),
    now: manager.now,
    settled: (key: string) => controller.enqueue(key),
    log: manager.log,
  };
  const reconciler = new ApplianceReconciler({
    client: manager.client,
    appliances,
    nodes: manager.cache<KubeObject & GpuNodeLike>(kinds.nodes),
    runtimeClasses: manager.cache<KubeObject & RuntimeClassLike>(kinds.runtimeClasses),
    children: (kind) => children.get(kind),
    pods: manager.cache<KubeObject & PodLike>(kinds.pods, openSearchPodSelector),
    events: manager.events,
    profiles: options.profiles,
    images: options.images,
    ...(options.metricsNamespaces ? { metricsNamespaces: options.metricsNamespaces } : {}),
    operatorNamespace: options.operatorNamespace,
    models,
    enqueue: (key) => controller.enqueue(key),
    ...(ingressController && ingressSliceCache
      ? { ingressProxies: () => ingressProxiesOf(ingressController, ingressSliceCache.list()) }
      : {}),
    ...(options.ollamaUrl ? { ollamaUrl: options.ollamaUrl } : {}),
    dataCare: {
      consistency:
        options.consistencyCheck &&
        new ConsistencyChecks({
          ...options.consistencyCheck,
          now: manager.now,
          settled: (key) => controller.enqueue(key),
          log: manager.log,
        }),
      embeddings:
        readings &&
        new CortexWatch({
          read: async (namespace, name) => embeddingsStatus(await readings.embeddings(namespace, name)),
          what: "embedding status",
          ...watching,
        }),
      migrations:
        readings &&
        new CortexWatch({
          read: async (namespace, name) => migrationsStatus(await readings.migrations(namespace, name)),
          what: "migration status",
          ...watching,
        }),
      storage:
        readings &&
        new CortexWatch({
          read: async (namespace, name) => applianceStorage(await readings.storage(namespace, name)),
          what: "storage status",
          ...watching,
        }),
      backups:
        options.backups &&
        new ScheduledBackups({
          ...options.backups,
          now: manager.now,
          settled: (key) => controller.enqueue(key),
          log: manager.log,
        }),
    },
    metrics: manager.metrics,
    now: manager.now,
    log: manager.log,
  });
  // Keys outside the operator's namespaces are dropped by the manager.
  const everyAppliance = () => keysOf(appliances);
  const controller = manager.add({
    name: "appliance",
    for: kinds.remramAppliances,
    owns: ownedKinds.map((kind) => ({ kind, labelSelector: managedSelector })),
    watches: [
      { kind: kinds.persistentVolumeClaims, labelSelector: managedSelector, map: applianceOfLabel },
      { kind: kinds.pods, labelSelector: openSearchPodSelector, map: applianceOfLabel },
      { kind: kinds.nodes, map: onGpuChange(everyAppliance) },
      // Which RuntimeClass exists decides GPU or CPU (gpu.ts); they are few and rarely change, so any event wakes all.
      { kind: kinds.runtimeClasses, map: everyAppliance },
      // The ingress controller's pods moved: each gateway behind an Ingress trusts their new addresses.
      ...(ingressSlices ? [{ ...ingressSlices, map: everyAppliance }] : []),
    ],
    reconcile: (key) => reconciler.reconcile(key),
    // Closing the pull streams lets Ollama cancel the downloads and record their parts for the next leader.
    onStop: () => models.stop(),
  });
  return controller;
}

function keysOf(cache: Cache<KubeObject>): string[] {
  return cache.list().map((object) => objectKey(object.metadata.namespace, object.metadata.name));
}
