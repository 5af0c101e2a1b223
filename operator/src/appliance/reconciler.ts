/**
 * RemramAppliance reconciler: read the appliance and the nodes from cache, build every child, apply only what
 * differs from the live object (server-side apply, forced), observe the components, and write status through
 * /status only when it changed. Level-triggered: the key is all it gets.
 */
import { randomBytes } from "node:crypto";
import { type CallerName, callerNames } from "@remram/contract";
import type { Logger } from "pino";
import type { Condition } from "../api/v1alpha1/common.js";
import { type RemramApplianceStatus, remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { isSubset } from "../runtime/apply.js";
import type { Cache } from "../runtime/cache.js";
import { mergeConditions, transitions } from "../runtime/conditions.js";
import type { ReconcileResult } from "../runtime/controller.js";
import type { EventRecorder } from "../runtime/events.js";
import { type KubeClient, type KubeObject, objectPath } from "../runtime/kube-client.js";
import type { OperatorMetrics } from "../runtime/metrics.js";
import { controllerReference, splitKey } from "../runtime/owner.js";
import { parseSpec, TerminalError } from "../runtime/terminal-error.js";
import { backupDestinationProblem } from "./backup-destination.js";
import { unwantedApp } from "./children/app.js";
import { cortexCredentialKey, cortexCredentialSecret, cortexEmbedding } from "./children/cortex.js";
import { buildDevicePlugin } from "./children/device-plugin.js";
import { gatewayIngressSpec } from "./children/gateway-expose.js";
import { requiredModelList } from "./children/ollama.js";
import { hostCheckContainer } from "./children/opensearch.js";
import {
  type ApplianceContext,
  childName,
  type IngressProxies,
  type OperatorImages,
  selectorLabels,
  serviceUrl,
} from "./children/shared.js";
import { buildApplianceChildren, keepLiveStorage } from "./children.js";
import { type DataCare, forgetDataCare, observeDataCare } from "./data-care.js";
import { ExternalOpenSearchProbe, type ExternalTarget, type ProbeOutcome } from "./external-opensearch.js";
import {
  CertManagerProbe,
  channelsCondition,
  channelTokens,
  cloudKeyState,
  decodeSecretValue,
  observeExposure,
} from "./gateway-access.js";
import { settleExposure } from "./gateway-certificates.js";
import {
  decideGpu,
  type GpuNodeLike,
  type RuntimeClassLike,
  runtimeClassNameOf,
  runtimeClassState,
  usableGpuInventory,
} from "./gpu.js";
import { gpuInventory, type HardwareProfile, type ProfileName, selectProfile } from "./hardware-profiles.js";
import { deleteLeftovers } from "./leftovers.js";
import type { ModelPuller } from "./model-puller.js";
import {
  applianceConditions,
  degradedCondition,
  eventType,
  modelStatuses,
  observeWorkload,
} from "./status.js";

export interface RemramAppliance extends KubeObject {
  spec?: unknown;
  status?: RemramApplianceStatus;
}

export interface ApplianceReconcilerDeps {
  client: KubeClient;
  appliances: Cache<RemramAppliance>;
  nodes: Cache<GpuNodeLike>;
  /** Cluster-scoped RuntimeClasses: read to find the GPU one, never written. */
  runtimeClasses: Cache<RuntimeClassLike>;
  /** Caches of owned children by kind ("Deployment", "Secret", ...), and of the appliance's pods. */
  children: (kind: string) => Cache<KubeObject> | undefined;
  pods: Cache<PodLike>;
  events: EventRecorder;
  profiles: ReadonlyMap<ProfileName, HardwareProfile>;
  images: OperatorImages;
  /** Namespaces whose Prometheus may scrape appliance metrics (NetworkPolicy); none by default. */
  metricsNamespaces?: readonly string[];
  /** The operator's own namespace (its pods reach each appliance's Ollama through the NetworkPolicy). */
  operatorNamespace: string;
  models: ModelPuller;
  /** Requeue an appliance now (a model pull published progress, failed or finished). */
  enqueue?: (key: string) => void;
  /** Where the operator itself reaches an appliance's Ollama (cluster DNS by default; overridden when run outside). */
  ollamaUrl?: (appliance: { name: string; namespace: string }) => string;
  now: () => number;
  /** The ingress controller's pod addresses, from its watched EndpointSlices; undefined: the operator does not look. */
  ingressProxies?: () => IngressProxies;
  /** How an external OpenSearch is asked (tests give a stand-in where no cluster runs). */
  probeOpenSearch?: (target: ExternalTarget) => Promise<ProbeOutcome>;
  randomToken?: () => string;
  /** The consistency check and backups of the appliance's data (data-care.ts). */
  dataCare?: DataCare;
  metrics?: OperatorMetrics;
  log: Logger;
}

export interface PodLike {
  metadata?: { labels?: Record<string, string>; namespace?: string };
  status?: {
    initContainerStatuses?: {
      name: string;
      state?: { terminated?: { exitCode?: number; message?: string } };
    }[];
  };
}

const gatewayTokenKey = "token";

export class ApplianceReconciler {
  private readonly certManager: CertManagerProbe;
  private readonly externalOpenSearch: ExternalOpenSearchProbe;
  constructor(private readonly deps: ApplianceReconcilerDeps) {
    this.certManager = new CertManagerProbe(deps.client, deps.now);
    this.externalOpenSearch = new ExternalOpenSearchProbe(deps.client, deps.now, deps.probeOpenSearch);
  }

  async reconcile(key: string): Promise<ReconcileResult | undefined> {
    const { namespace, name } = splitKey(key);
    const appliance = this.deps.appliances.get(namespace, name);
    // Gone: the garbage collector removes children through their ownerReferences.
    if (appliance === undefined || appliance.metadata.deletionTimestamp !== undefined) {
      this.deps.metrics?.setApplianceConditions(namespace, name, undefined);
      this.deps.metrics?.setApplianceConsistency(namespace, name, undefined);
      forgetDataCare(this.deps.dataCare ?? {}, namespace, name);
      return undefined;
    }
    const spec = parseSpec(remramApplianceSpec, appliance.spec);
    const nodes = this.deps.nodes.list();
    const inventory = gpuInventory(nodes);
    const gpuMode = spec.ollama.gpu;
    const runtimeClassName = runtimeClassNameOf(spec);
    const runtimeClass = runtimeClassState(
      runtimeClassName,
      this.deps.runtimeClasses.get(undefined, runtimeClassName),
      nodes,
    );
    const profileName =
      spec.hardwareProfile === "auto"
        ? selectProfile(usableGpuInventory(gpuMode, inventory, runtimeClass))
        : spec.hardwareProfile;
    const profile = this.deps.profiles.get(profileName);
    // The profiles are read at start: only another profile in the spec (or a restart with this one) helps.
    if (profile === undefined) throw new TerminalError(`hardware profile ${profileName} is not installed`);
    const { useGpu, devicePlugin } = decideGpu({
      mode: gpuMode,
      inventory,
      runtimeClass,
      profileUsesGpu: profile.ollama.gpu,
    });

    const cloudKey = await cloudKeyState(this.deps.client, namespace, spec);
    const external = await this.externalOpenSearch.observe(namespace, name, spec);
    const backupProblem = await backupDestinationProblem(this.deps.client, namespace, spec.backup);
    const tokens = await channelTokens(this.deps.client, namespace, spec);
    const liveIngress = this.deps.children("Ingress")?.get(namespace, childName(name, "gateway"));
    const ingressSpec = gatewayIngressSpec({ spec });
    // Asked only where it matters: an issuer named, or an Ingress whose cert-manager objects may be left over.
    const certManagerInstalled =
      (ingressSpec?.tls.enabled === true && ingressSpec.tls.issuerRef !== undefined) ||
      liveIngress !== undefined
        ? await this.certManager.installed()
        : false;
    const ingressProxies = this.deps.ingressProxies?.();
    const ctx: ApplianceContext = {
      channelTokenVersions: tokens.versions,
      certManagerInstalled,
      ...(ingressProxies === undefined ? {} : { ingressProxies }),
      ...(cloudKey.version === undefined ? {} : { cloudKeyVersion: cloudKey.version }),
      ...(external.secretsVersion === undefined ? {} : { opensearchSecretsVersion: external.secretsVersion }),
      ...(backupProblem === undefined ? {} : { backupDestinationProblem: backupProblem }),
      name,
      namespace,
      owner: controllerReference(appliance),
      spec,
      profile,
      useGpu,
      images: this.deps.images,
      metricsNamespaces: this.deps.metricsNamespaces ?? [],
      operatorNamespace: this.deps.operatorNamespace,
      secrets: {
        cortexCredentials: Object.fromEntries(
          callerNames.map((caller) => [
            caller,
            this.existingOrNewToken(
              "Secret",
              namespace,
              childName(name, `cortex-${caller}`),
              cortexCredentialKey,
            ),
          ]),
        ) as Record<CallerName, string>,
        gatewayToken: this.existingOrNewToken(
          "Secret",
          namespace,
          childName(name, "gateway-config"),
          gatewayTokenKey,
        ),
      },
    };
    await this.checkCortexTokenSecret(ctx);
    const desired = buildApplianceChildren(ctx);
    if (devicePlugin) desired.push(buildDevicePlugin(this.deps.images, runtimeClassName));
    const applied = await this.applyChildren(desired);
    await deleteLeftovers(this.deps.client, this.deps.children, ctx, unwantedApp(ctx));
    await settleExposure(this.deps.client, this.deps.children, ctx, this.deps.now());

    const required = requiredModelList(ctx);
    const ollamaUrl = this.deps.ollamaUrl?.({ name, namespace }) ?? serviceUrl(ctx, "ollama");
    const workloads = {
      opensearch: observeWorkload(
        this.deps.children("StatefulSet")?.get(namespace, childName(name, "opensearch")),
      ),
      ollama: observeWorkload(this.deps.children("Deployment")?.get(namespace, childName(name, "ollama"))),
      cortex: observeWorkload(this.deps.children("Deployment")?.get(namespace, childName(name, "cortex"))),
      gateway: observeWorkload(this.deps.children("Deployment")?.get(namespace, childName(name, "gateway"))),
    };
    const modelReport = workloads.ollama.available
      ? await this.deps.models.ensure(ollamaUrl, [...new Set(required.map((model) => model.name))], {
          insecureRegistries: spec.ollama.insecureRegistries,
          ...(this.deps.enqueue ? { onChange: () => this.deps.enqueue?.(key) } : {}),
        })
      : { pullError: "Ollama is not available yet" };
    const hostMaxMapCount = this.hostMaxMapCount(namespace, name);
    const inputs = applianceConditions({
      spec,
      gpu: inventory,
      useGpu,
      runtimeClass,
      workloads,
      models: { required, ...modelReport },
      ...(hostMaxMapCount !== undefined ? { hostMaxMapCount } : {}),
      ...(cloudKey.problem === undefined ? {} : { cloudKeyProblem: cloudKey.problem }),
      ...(external.condition === undefined ? {} : { externalOpenSearch: external.condition }),
    });
    const exposure = await observeExposure(this.deps.client, this.deps.children, ctx, this.deps.now());
    inputs.push(exposure.condition, channelsCondition(spec, tokens.versions, tokens.problems));
    const createdMs = Date.parse(appliance.metadata.creationTimestamp ?? "") || this.deps.now();
    const care = observeDataCare(
      this.deps.dataCare ?? {},
      {
        namespace,
        name,
        spec,
        status: appliance.status,
        createdMs,
        backupProblem,
        embedding: cortexEmbedding(ctx),
      },
      workloads.cortex.available,
    );
    inputs.push(...care.conditions);
    const now = this.deps.now();
    const nowIso = new Date(Math.floor(now / 1000) * 1000).toISOString().replace(".000Z", "Z");
    const generation = appliance.metadata.generation ?? 1;
    const previous = appliance.status?.conditions;
    let conditions = mergeConditions(previous, inputs, generation, nowIso);
    conditions = mergeConditions(conditions, [degradedCondition(conditions, now)], generation, nowIso);
    const status: RemramApplianceStatus = {
      observedGeneration: generation,
      conditions,
      hardwareProfile: profileName,
      gpu: {
        available: inventory.count > 0,
        count: inventory.count,
        ...(inventory.memoryMiB !== undefined ? { memoryMiB: inventory.memoryMiB } : {}),
        ...(inventory.product ? { product: inventory.product.slice(0, 128) } : {}),
      },
      models: modelStatuses(required, modelReport, appliance.status?.models, nowIso),
      endpoints: {
        ...(spec.opensearch.mode === "embedded"
          ? { opensearch: serviceUrl(ctx, "opensearch") }
          : { opensearch: spec.opensearch.external?.url ?? "" }),
        ollama: serviceUrl(ctx, "ollama"),
        cortex: serviceUrl(ctx, "cortex"),
        gateway: serviceUrl(ctx, "gateway"),
      },
      ...(exposure.status === undefined ? {} : { gateway: exposure.status }),
      ...care.status,
    };
    // The gauges first: whoever sees the new status must find them at least as new (a scrape may not lag it).
    this.deps.metrics?.setApplianceConditions(namespace, name, conditions);
    this.deps.metrics?.setApplianceConsistency(namespace, name, status.consistency);
    await this.writeStatus(appliance, status, previous, conditions);
    if (applied > 0) this.deps.log.info({ key, applied }, "applied children");
    const ready = conditions.find((condition) => condition.type === "Ready")?.status === "True";
    if (!ready) return { requeueAfterMs: 15_000 };
    // The key's, tokens' and certificate's Secrets are outside the watched children: look again until they are there.
    // An external OpenSearch is asked again as often: its Secrets are not watched, and it can go away on its own.
    const waiting =
      cloudKey.problem !== undefined ||
      tokens.problems.length > 0 ||
      exposure.condition.status !== "True" ||
      external.condition !== undefined;
    const nextCheckMs = care.nextInMs;
    if (waiting) return { requeueAfterMs: Math.min(30_000, nextCheckMs ?? 30_000) };
    return nextCheckMs === undefined ? undefined : { requeueAfterMs: nextCheckMs };
  }

  private existingOrNewToken(kind: string, namespace: string, name: string, key: string): string {
    const existing = decodeSecretValue(this.deps.children(kind)?.get(namespace, name), key);
    return existing ?? (this.deps.randomToken ?? (() => randomBytes(32).toString("base64url")))();
  }

  /** A user-provided admin credential Secret must exist with its key, or Cortex would wait forever on its volume. */
  private async checkCortexTokenSecret(ctx: ApplianceContext): Promise<void> {
    if (ctx.spec.cortex.tokenSecretRef === undefined) return;
    const reference = cortexCredentialSecret(ctx, "admin");
    const secret = await this.deps.client.get<KubeObject>(
      `/api/v1/namespaces/${ctx.namespace}/secrets/${reference.name}`,
    );
    if (decodeSecretValue(secret, reference.key) === undefined) {
      throw new Error(`Secret ${reference.name} has no key ${reference.key}`);
    }
  }

  /** Apply each desired object whose fields are not all present in the live one; returns how many were applied. */
  private async applyChildren(desired: readonly KubeObject[]): Promise<number> {
    let applied = 0;
    for (const object of desired) {
      const cache = this.deps.children(object.kind);
      const live =
        cache?.get(object.metadata.namespace, object.metadata.name) ??
        (await this.liveWithoutCache(object, cache));
      const wanted = withoutUndefined(keepLiveStorage(object, live));
      if (live !== undefined && isSubset(wanted, live)) continue;
      await this.deps.client.apply(wanted);
      applied++;
    }
    return applied;
  }

  /** Objects outside the child caches (the device plugin DaemonSet in kube-system) are read directly. */
  private async liveWithoutCache(
    object: KubeObject,
    cache: Cache<KubeObject> | undefined,
  ): Promise<KubeObject | undefined> {
    if (cache !== undefined) return undefined;
    return this.deps.client.get<KubeObject>(objectPath(object));
  }

  private hostMaxMapCount(namespace: string, name: string): number | undefined {
    const selector = selectorLabels(name, "opensearch");
    for (const pod of this.deps.pods.list(namespace)) {
      const labels = pod.metadata?.labels ?? {};
      if (!Object.entries(selector).every(([key, value]) => labels[key] === value)) continue;
      const check = pod.status?.initContainerStatuses?.find((status) => status.name === hostCheckContainer);
      const value = Number.parseInt(check?.state?.terminated?.message?.trim() ?? "", 10);
      if (Number.isFinite(value)) return value;
    }
    return undefined;
  }

  private async writeStatus(
    appliance: RemramAppliance,
    status: RemramApplianceStatus,
    previous: readonly Condition[] | undefined,
    conditions: Condition[],
  ): Promise<void> {
    const current = appliance.status ?? {};
    if (isSubset(status, current) && isSubset(current, status)) return;
    await this.deps.client.applyStatus({
      apiVersion: appliance.apiVersion,
      kind: appliance.kind,
      metadata: { name: appliance.metadata.name, namespace: appliance.metadata.namespace },
      status,
    } as KubeObject);
    for (const condition of transitions(previous, conditions)) {
      if (condition.status === "Unknown") continue;
      await this.deps.events.record(appliance, {
        type: eventType(condition),
        reason: condition.reason,
        action: "Reconcile",
        note: `${condition.type}=${condition.status}: ${condition.message}`,
      });
    }
  }
}

/** SSA bodies must not carry `undefined` (JSON drops it, but isSubset should not see it either). */
function withoutUndefined<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}
