/**
 * The operator process without its entry point: informers that only enqueue keys, one controller per kind, Lease
 * leader election (only the leader reconciles), probes and metrics, and an orderly stop. main.ts runs it in the
 * cluster; integration tests run it in-process against the test bed's API server.
 */

import type { Server } from "node:http";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { buildCrd, crdRevisionAnnotation } from "./api/crd.js";
import { allKinds } from "./api/v1alpha1/index.js";
import { applianceLabel, managedBy, type OperatorImages } from "./appliance/children.js";
import type { GpuNodeLike, RuntimeClassLike } from "./appliance/gpu.js";
import type { HardwareProfile, ProfileName } from "./appliance/hardware-profiles.js";
import { ModelPuller } from "./appliance/model-puller.js";
import { ApplianceReconciler, type PodLike, type RemramAppliance } from "./appliance/reconciler.js";
import { type ArtifactProposalObject, ArtifactProposalReconciler } from "./artifact-proposal/reconciler.js";
import { CortexDirectory } from "./cortex/directory.js";
import { type DimensionPolicyObject, DimensionPolicyReconciler } from "./dimension-policy/reconciler.js";
import { type DreamScheduleObject, DreamScheduleReconciler } from "./dream-schedule/reconciler.js";
import { Controller, type Reconcile } from "./runtime/controller.js";
import { EventRecorder } from "./runtime/events.js";
import { Informer, type InformerEvent } from "./runtime/informer.js";
import { KubeClient, type KubeObject } from "./runtime/kube-client.js";
import { LeaderElector } from "./runtime/leader-election.js";
import { OperatorMetrics } from "./runtime/metrics.js";
import { controllerOwnerKey, objectKey } from "./runtime/owner.js";
import { startProbeServer } from "./runtime/probes.js";

export interface OperatorOptions {
  kubeConfig: KubeConfig;
  log: Logger;
  /** Pod name: the Lease holder identity and the Events' reportingInstance. */
  identity: string;
  /** Namespace of the leader-election Lease. */
  leaseNamespace: string;
  leaseName?: string;
  images: OperatorImages;
  profiles: ReadonlyMap<ProfileName, HardwareProfile>;
  /**
   * Namespaces appliances may live in. Workload, Secret and Pod caches watch only these (the chart grants RBAC only
   * there, no cluster-wide Secret access); undefined = all namespaces.
   */
  watchNamespaces?: readonly string[];
  /** Namespaces whose Prometheus may scrape appliance metrics (the chart's metrics.allowedNamespaces). */
  metricsNamespaces?: readonly string[];
  /** 0 = no probe server (tests); else /healthz, /readyz and /metrics on this port. */
  probePort?: number;
  resyncMs?: number;
  /** How the operator reaches an appliance's Ollama and Cortex; cluster DNS by default. */
  ollamaUrl?: (appliance: { name: string; namespace: string }) => string;
  cortexUrl?: (appliance: { name: string; namespace: string }) => string;
  fetchImpl?: typeof fetch;
  now?: () => number;
}

export interface RunningOperator {
  client: KubeClient;
  metrics: OperatorMetrics;
  controllers: readonly Controller[];
  isLeader(): boolean;
  /** Stop intake, finish in-flight reconciles, release the Lease. */
  stop(): Promise<void>;
  /** Resolves when leadership is lost (the process should exit so a fresh start re-campaigns). */
  lostLeadership: Promise<void>;
}

const group = "/apis/remram.io/v1alpha1";

function namespacedPath(prefix: string, namespace: string | undefined, plural: string): string {
  return namespace === undefined ? `${prefix}/${plural}` : `${prefix}/namespaces/${namespace}/${plural}`;
}

/** What of a node matters to appliances: GPU allocatable, GPU labels, schedulability, runtime handlers. */
function gpuFingerprint(node: GpuNodeLike): string {
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

/** Several informers (one per namespace) read as one cache. */
class MergedCache<T extends KubeObject> {
  constructor(private readonly parts: readonly Informer<T>[]) {}

  get(namespace: string | undefined, name: string): T | undefined {
    for (const part of this.parts) {
      const found = part.get(namespace, name);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  list(namespace?: string): readonly T[] {
    return this.parts.flatMap((part) => part.list(namespace));
  }
}
const managedSelector = `app.kubernetes.io/managed-by=${managedBy}`;
const applianceVersion = "remram.io/v1alpha1";

/** Ask the API server who we are (authentication.k8s.io/v1 SelfSubjectReview). */
async function whoAmI(client: KubeClient): Promise<string> {
  const review = await client.create<{ status?: { userInfo?: { username?: string } } }>(
    "/apis/authentication.k8s.io/v1/selfsubjectreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
  );
  const username = review.status?.userInfo?.username;
  if (!username) throw new Error("SelfSubjectReview returned no username");
  return username;
}

export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const { log, kubeConfig } = options;
  const now = options.now ?? Date.now;
  const metrics = new OperatorMetrics();
  const client = new KubeClient(kubeConfig, {
    observer: (method, code, host) => metrics.restRequests.inc({ method, code: String(code), host }),
  });
  const events = new EventRecorder(client, options.identity, log, now);
  const operatorUsername = await whoAmI(client);
  const controllers = new Map<string, Controller>();
  const enqueue = (controller: string, key: string | undefined): void => {
    if (key !== undefined) controllers.get(controller)?.enqueue(key);
  };
  const informers: Informer<KubeObject>[] = [];
  const informer = <T extends KubeObject>(
    name: string,
    path: string,
    onEvent: (object: T, event: InformerEvent) => void,
    labelSelector?: string,
  ): Informer<T> => {
    const created = new Informer<T>(kubeConfig, client, {
      name,
      path,
      ...(labelSelector ? { labelSelector } : {}),
      onEvent,
      onError: (error, restartInMs) => {
        metrics.informerRestarts.inc({ resource: name });
        log.warn({ resource: name, restartInMs, err: error }, "watch failed; restarting");
      },
    });
    informers.push(created as unknown as Informer<KubeObject>);
    return created;
  };
  const keyOf = (object: KubeObject) => objectKey(object.metadata.namespace, object.metadata.name);

  const watched = (namespace: string | undefined): boolean =>
    options.watchNamespaces === undefined || options.watchNamespaces.includes(namespace ?? "");
  // Primary kinds: an event enqueues the object's own key.
  const appliances = informer<RemramAppliance>("remramappliances", `${group}/remramappliances`, (object) => {
    if (watched(object.metadata.namespace)) enqueue("appliance", keyOf(object));
    else
      log.warn(
        { appliance: keyOf(object) },
        "appliance outside the operator's namespaces (REMRAM_WATCH_NAMESPACES); ignored",
      );
  });
  // Kinds that live in an appliance's namespace: only those in this operator's namespaces are its to reconcile.
  const enqueueWatched = (kind: string) => (object: KubeObject) => {
    if (watched(object.metadata.namespace)) enqueue(kind, keyOf(object));
  };
  const schedules = informer<DreamScheduleObject>(
    "dreamschedules",
    `${group}/dreamschedules`,
    enqueueWatched("dreamschedule"),
  );
  const policies = informer<DimensionPolicyObject>(
    "dimensionpolicies",
    `${group}/dimensionpolicies`,
    enqueueWatched("dimensionpolicy"),
  );
  const proposals = informer<ArtifactProposalObject>(
    "artifactproposals",
    `${group}/artifactproposals`,
    enqueueWatched("artifactproposal"),
  );
  // Cluster-wide events concern every appliance this operator owns, never those outside its namespaces (another
  // operator's, which it may not even read Secrets for).
  const enqueueEveryAppliance = () => {
    for (const appliance of appliances.list())
      if (watched(appliance.metadata.namespace)) enqueue("appliance", keyOf(appliance));
  };
  // Nodes change GPU availability and the auto profile of every appliance, but heartbeats (status updates every
  // few seconds per node) must not wake every appliance: only a changed GPU fingerprint does.
  const nodeFingerprints = new Map<string, string>();
  const nodes = informer<KubeObject & GpuNodeLike>("nodes", "/api/v1/nodes", (node, event) => {
    const fingerprint = event === "delete" ? "" : gpuFingerprint(node);
    if (nodeFingerprints.get(node.metadata.name) === fingerprint) return;
    if (event === "delete") nodeFingerprints.delete(node.metadata.name);
    else nodeFingerprints.set(node.metadata.name, fingerprint);
    enqueueEveryAppliance();
  });
  // Which RuntimeClass exists decides GPU or CPU (gpu.ts); they are few and rarely change, so any event wakes all.
  const runtimeClasses = informer<KubeObject & RuntimeClassLike>(
    "runtimeclasses",
    "/apis/node.k8s.io/v1/runtimeclasses",
    enqueueEveryAppliance,
  );
  // Owned children map back to their appliance through the controller ownerReference.
  const toOwner = (object: KubeObject) =>
    enqueue("appliance", controllerOwnerKey(object, applianceVersion, "RemramAppliance"));
  const scopes = options.watchNamespaces ?? [undefined];
  /** One informer per watched namespace, read as one cache. */
  const scoped = <T extends KubeObject>(
    name: string,
    collection: (namespace: string | undefined) => string,
    onEvent: (object: T) => void,
    labelSelector: string,
  ): MergedCache<T> =>
    new MergedCache(
      scopes.map((namespace) =>
        informer<T>(namespace ? `${name}@${namespace}` : name, collection(namespace), onEvent, labelSelector),
      ),
    );
  const childPaths: Record<string, (namespace: string | undefined) => string> = {
    Deployment: (namespace) => namespacedPath("/apis/apps/v1", namespace, "deployments"),
    StatefulSet: (namespace) => namespacedPath("/apis/apps/v1", namespace, "statefulsets"),
    Service: (namespace) => namespacedPath("/api/v1", namespace, "services"),
    Secret: (namespace) => namespacedPath("/api/v1", namespace, "secrets"),
    PersistentVolumeClaim: (namespace) => namespacedPath("/api/v1", namespace, "persistentvolumeclaims"),
    NetworkPolicy: (namespace) => namespacedPath("/apis/networking.k8s.io/v1", namespace, "networkpolicies"),
  };
  const byApplianceLabel = (object: KubeObject) => {
    const appliance = object.metadata.labels?.[applianceLabel];
    if (appliance) enqueue("appliance", objectKey(object.metadata.namespace, appliance));
  };
  const children = new Map<string, MergedCache<KubeObject>>();
  for (const [kind, path] of Object.entries(childPaths)) {
    // Retained PVCs carry no ownerReference: map them by the appliance label instead.
    const onEvent = kind === "PersistentVolumeClaim" ? byApplianceLabel : toOwner;
    children.set(kind, scoped(kind.toLowerCase(), path, onEvent, managedSelector));
  }
  const pods = scoped<KubeObject & PodLike>(
    "pods",
    (namespace) => namespacedPath("/api/v1", namespace, "pods"),
    byApplianceLabel,
    `${managedSelector},app.kubernetes.io/name=opensearch`,
  );

  const cortex = new CortexDirectory({
    secrets: children.get("Secret") as MergedCache<KubeObject>,
    appliances,
    readSecret: (namespace, name) =>
      client.get<KubeObject>(`/api/v1/namespaces/${namespace}/secrets/${name}`),
    ...(options.cortexUrl ? { cortexUrl: options.cortexUrl } : {}),
    ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
  });
  const modelPuller = new ModelPuller(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {});
  const applianceReconciler = new ApplianceReconciler({
    client,
    appliances,
    nodes,
    runtimeClasses,
    children: (kind) => children.get(kind),
    pods,
    events,
    profiles: options.profiles,
    images: options.images,
    ...(options.metricsNamespaces ? { metricsNamespaces: options.metricsNamespaces } : {}),
    operatorNamespace: options.leaseNamespace,
    models: modelPuller,
    enqueue: (key) => enqueue("appliance", key),
    ...(options.ollamaUrl ? { ollamaUrl: options.ollamaUrl } : {}),
    metrics,
    now,
    log,
  });
  const dreamReconciler = new DreamScheduleReconciler({
    client,
    schedules,
    proposals,
    cortex,
    events,
    metrics,
    operatorUsername: () => operatorUsername,
    now,
    enqueue: (key) => enqueue("dreamschedule", key),
    log,
  });
  const policyReconciler = new DimensionPolicyReconciler({ client, policies, cortex, events, now, log });
  const proposalReconciler = new ArtifactProposalReconciler({
    client,
    proposals,
    cortex,
    events,
    metrics,
    now,
    log,
  });

  const controller = (
    name: string,
    reconcile: Reconcile,
    cache: { list(): readonly KubeObject[] },
  ): Controller => {
    const created = new Controller({
      name,
      reconcile,
      listKeys: () => cache.list().map(keyOf),
      metrics,
      log: log.child({ controller: name }),
      ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
    });
    controllers.set(name, created);
    return created;
  };
  const asCache = <T>(cache: Informer<T & KubeObject>) => cache as unknown as Informer<KubeObject>;
  controller("appliance", (key) => applianceReconciler.reconcile(key), {
    list: () =>
      asCache(appliances)
        .list()
        .filter((appliance) => watched(appliance.metadata.namespace)),
  });
  controller("dreamschedule", (key) => dreamReconciler.reconcile(key), asCache(schedules));
  controller("dimensionpolicy", (key) => policyReconciler.reconcile(key), asCache(policies));
  controller("artifactproposal", (key) => proposalReconciler.reconcile(key), asCache(proposals));

  await Promise.all(informers.map((each) => each.start()));

  const expectedRevisions = new Map(
    allKinds.map((kind) => {
      const crd = buildCrd(kind) as { metadata: { name: string; annotations: Record<string, string> } };
      return [crd.metadata.name, crd.metadata.annotations[crdRevisionAnnotation]];
    }),
  );
  let probeServer: Server | undefined;
  if (options.probePort !== undefined && options.probePort > 0) {
    probeServer = await startProbeServer({
      port: options.probePort,
      registry: metrics.registry,
      readiness: {
        caches: () => {
          const unsynced = informers.filter((each) => !each.hasSynced()).length;
          return unsynced === 0 ? undefined : `${unsynced} caches not synced`;
        },
        crds: async () => {
          for (const [name, revision] of expectedRevisions) {
            const crd = await client.get<KubeObject>(
              `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
            );
            const served = crd?.metadata.annotations?.[crdRevisionAnnotation];
            if (served !== revision)
              return `${name} is at revision ${served ?? "none"}, expected ${revision}`;
          }
          return undefined;
        },
      },
    });
  }

  let signalLost: () => void = () => {};
  const lostLeadership = new Promise<void>((resolve) => {
    signalLost = resolve;
  });
  const leaseName = options.leaseName ?? "remram-operator";
  const elector = new LeaderElector({
    // Lease renewals get their own client so `client.totalWrites()` counts reconcile writes only.
    client: new KubeClient(kubeConfig, {
      observer: (method, code, host) => metrics.restRequests.inc({ method, code: String(code), host }),
    }),
    namespace: options.leaseNamespace,
    name: leaseName,
    identity: options.identity,
    log,
    onStartedLeading: () => {
      metrics.leaderStatus.set({ name: leaseName }, 1);
      for (const each of controllers.values()) each.start();
    },
    onStoppedLeading: () => {
      metrics.leaderStatus.set({ name: leaseName }, 0);
      signalLost();
    },
  });
  metrics.leaderStatus.set({ name: leaseName }, 0);
  elector.start();

  return {
    client,
    metrics,
    controllers: [...controllers.values()],
    isLeader: () => elector.isLeader(),
    lostLeadership,
    async stop() {
      await Promise.all([...controllers.values()].map((each) => each.stop()));
      // Closing the pull streams lets Ollama cancel the downloads and record their parts for the next leader.
      modelPuller.stop();
      await Promise.all(informers.map((each) => each.stop()));
      await elector.stop();
      metrics.leaderStatus.set({ name: leaseName }, 0);
      await new Promise<void>((resolve) => (probeServer ? probeServer.close(() => resolve()) : resolve()));
    },
  };
}
