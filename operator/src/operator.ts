/**
 * The operator process without its entry point: a manager (shared caches, Lease leader election, probes and
 * metrics, an orderly stop) and the four controllers, each declaring what it reconciles, owns and watches. main.ts
 * runs it in the cluster; integration tests run it in-process against the test bed's API server.
 */

import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { buildCrd, crdRevisionAnnotation } from "./api/crd.js";
import { allKinds } from "./api/v1alpha1/index.js";
import { remramApplianceSpec } from "./api/v1alpha1/remram-appliance.js";
import type { OperatorImages } from "./appliance/children/shared.js";
import { managedSelector, setupApplianceController } from "./appliance/controller.js";
import type { HardwareProfile, ProfileName } from "./appliance/hardware-profiles.js";
import type { IngressControllerService } from "./appliance/ingress-controller.js";
import { sealedSecretsAttachment } from "./appliance/secrets-bundle.js";
import { setupArtifactProposalController } from "./artifact-proposal/controller.js";
import { CortexDirectory } from "./cortex/directory.js";
import { setupDimensionPolicyController } from "./dimension-policy/controller.js";
import { setupDreamScheduleController } from "./dream-schedule/controller.js";
import type { Controller } from "./runtime/controller.js";
import type { KubeClient, KubeObject } from "./runtime/kube-client.js";
import { ControllerManager, type Manager } from "./runtime/manager.js";
import type { OperatorMetrics } from "./runtime/metrics.js";
import type { ReadinessCheck } from "./runtime/probes.js";
import * as kinds from "./runtime/resource-kinds.js";

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
  /** The ingress controller's Service (the chart's ingressController); undefined: its pods are not looked up. */
  ingressController?: IngressControllerService;
  /** 0 = no probe server (tests); else /healthz, /readyz and /metrics on this port. */
  probePort?: number;
  resyncMs?: number;
  /** How often Cortex's pending proposals are mirrored as ArtifactProposals between dream cycles (default 10 s). */
  proposalMirrorMs?: number;
  /** How often each appliance's data is checked for consistency (default 6 h). */
  consistencyCheckMs?: number;
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

/** /readyz: every CRD is served at the revision this build generates. */
function crdsAtExpectedRevision(client: KubeClient): ReadinessCheck {
  const expectedRevisions = new Map(
    allKinds.map((kind) => {
      const crd = buildCrd(kind) as { metadata: { name: string; annotations: Record<string, string> } };
      return [crd.metadata.name, crd.metadata.annotations[crdRevisionAnnotation]];
    }),
  );
  return async () => {
    for (const [name, revision] of expectedRevisions) {
      const crd = await client.get<KubeObject>(
        `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      );
      const served = crd?.metadata.annotations?.[crdRevisionAnnotation];
      if (served !== revision) return `${name} is at revision ${served ?? "none"}, expected ${revision}`;
    }
    return undefined;
  };
}

/** The four controllers, and the Cortex directory they share (the appliance controller for its consistency checks). */
export function setupControllers(manager: Manager, options: OperatorOptions, operatorUsername: string): void {
  const appliances = manager.cache(kinds.remramAppliances);
  const cortex = new CortexDirectory({
    // The appliance controller's Secret cache: the token Secrets it generates are in it.
    secrets: manager.cache(kinds.secrets, managedSelector),
    appliances,
    readSecret: (namespace, name) =>
      manager.client.get<KubeObject>(`/api/v1/namespaces/${namespace}/secrets/${name}`),
    ...(options.cortexUrl ? { cortexUrl: options.cortexUrl } : {}),
    ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
  });
  setupApplianceController(manager, {
    profiles: options.profiles,
    images: options.images,
    ...(options.metricsNamespaces ? { metricsNamespaces: options.metricsNamespaces } : {}),
    operatorNamespace: options.leaseNamespace,
    ...(options.ollamaUrl ? { ollamaUrl: options.ollamaUrl } : {}),
    ...(options.fetchImpl ? { fetchImpl: options.fetchImpl } : {}),
    ...(options.ingressController ? { ingressController: options.ingressController } : {}),
    consistencyCheck: {
      run: async (namespace, name) => (await cortex.clientFor(namespace, name)).checkConsistency(),
      intervalMs: options.consistencyCheckMs ?? 6 * 3_600_000,
      // A Cortex reached at an out-of-cluster URL is not the Deployment's pods: their readiness says nothing of it.
      ignoreDeployment: options.cortexUrl !== undefined,
    },
    cortexReadings: {
      embeddings: async (namespace, name) => (await cortex.clientFor(namespace, name)).embeddings(),
      migrations: async (namespace, name) => (await cortex.clientFor(namespace, name)).migrations(),
      storage: async (namespace, name) => (await cortex.clientFor(namespace, name)).storage(),
      ignoreDeployment: options.cortexUrl !== undefined,
    },
    backups: {
      cortexFor: (namespace, name) => cortex.clientFor(namespace, name),
      attachmentsFor: async (namespace, name) => {
        const appliance = appliances.get(namespace, name);
        if (appliance === undefined) return [];
        const spec = remramApplianceSpec.parse((appliance as KubeObject & { spec?: unknown }).spec);
        return sealedSecretsAttachment(manager.client, { namespace, name, spec }, new Date(manager.now()));
      },
      ignoreDeployment: options.cortexUrl !== undefined,
    },
  });
  setupDreamScheduleController(manager, {
    cortex,
    operatorUsername,
    ...(options.proposalMirrorMs === undefined ? {} : { mirrorIntervalMs: options.proposalMirrorMs }),
  });
  setupDimensionPolicyController(manager, { cortex });
  setupArtifactProposalController(manager, { cortex });
}

export async function startOperator(options: OperatorOptions): Promise<RunningOperator> {
  const manager = new ControllerManager({
    kubeConfig: options.kubeConfig,
    log: options.log,
    identity: options.identity,
    leaseNamespace: options.leaseNamespace,
    leaseName: options.leaseName ?? "remram-operator",
    ...(options.watchNamespaces ? { watchNamespaces: options.watchNamespaces } : {}),
    // The operator's own kinds are read in every namespace, so one outside its namespaces is logged as ignored.
    clusterWideKinds: kinds.remramKinds,
    ...(options.probePort !== undefined ? { probePort: options.probePort } : {}),
    ...(options.resyncMs !== undefined ? { resyncMs: options.resyncMs } : {}),
    now: options.now ?? Date.now,
  });
  const operatorUsername = await whoAmI(manager.client);
  setupControllers(manager, options, operatorUsername);
  manager.addReadyzCheck("crds", crdsAtExpectedRevision(manager.client));
  await manager.start();
  return {
    client: manager.client,
    metrics: manager.metrics,
    controllers: manager.controllers,
    isLeader: () => manager.isLeader(),
    lostLeadership: manager.lostLeadership,
    stop: () => manager.stop(),
  };
}
