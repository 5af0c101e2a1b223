/**
 * The manager: shared caches that controllers read and subscribe to, the controllers they declare, Lease leader
 * election (only the leader's controllers run), /healthz, /readyz and /metrics, and an orderly stop. Handlers only
 * enqueue keys.
 */
import type { Server } from "node:http";
import type { KubeConfig } from "@kubernetes/client-node";
import type { Logger } from "pino";
import { type Cache, type CacheScope, cacheKey, cacheSources, SharedCache } from "./cache.js";
import { Controller } from "./controller.js";
import { type ControllerDeclaration, eventRoutes, type NamespaceScope } from "./controller-declaration.js";
import { EventRecorder } from "./events.js";
import { Informer } from "./informer.js";
import { type GroupVersionKind, KubeClient, type KubeObject } from "./kube-client.js";
import { LeaderElector } from "./leader-election.js";
import { OperatorMetrics } from "./metrics.js";
import { objectKey } from "./owner.js";
import { type ReadinessCheck, startProbeServer } from "./probes.js";

/** What a controller's setup uses of the manager. */
export interface Manager {
  readonly client: KubeClient;
  readonly metrics: OperatorMetrics;
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly now: () => number;
  /**
   * The shared cache of `kind` (with this label selector); every call for the same pair gets the same cache.
   * `namespace` pins it to that namespace alone (see Selection.namespace).
   */
  cache<T extends KubeObject>(kind: GroupVersionKind, labelSelector?: string, namespace?: string): Cache<T>;
  add(declaration: ControllerDeclaration): Controller;
}

export interface ManagerOptions extends CacheScope {
  kubeConfig: KubeConfig;
  log: Logger;
  /** The Lease holder identity and the Events' reportingInstance. */
  identity: string;
  leaseNamespace: string;
  leaseName: string;
  /** 0 or undefined: no probe server; else /healthz, /readyz and /metrics on this port. */
  probePort?: number;
  resyncMs?: number;
  now: () => number;
}

export class ControllerManager implements Manager {
  readonly metrics = new OperatorMetrics();
  readonly client: KubeClient;
  readonly events: EventRecorder;
  readonly log: Logger;
  readonly now: () => number;
  /** Resolves when leadership is lost (the process should exit so a fresh start re-campaigns). */
  readonly lostLeadership: Promise<void>;
  private signalLost: () => void = () => {};
  private readonly caches = new Map<string, SharedCache>();
  private readonly declared: { declaration: ControllerDeclaration; controller: Controller }[] = [];
  private readonly readiness: Record<string, ReadinessCheck> = {
    caches: () => {
      const unsynced = this.informers().filter((each) => !each.hasSynced()).length;
      return unsynced === 0 ? undefined : `${unsynced} caches not synced`;
    },
  };
  private readonly scope: NamespaceScope;
  private elector: LeaderElector | undefined;
  private probeServer: Server | undefined;
  private started = false;

  constructor(private readonly options: ManagerOptions) {
    this.log = options.log;
    this.now = options.now;
    this.client = this.restClient();
    this.events = new EventRecorder(this.client, options.identity, options.log, options.now);
    this.lostLeadership = new Promise((resolve) => {
      this.signalLost = resolve;
    });
    const { watchNamespaces } = options;
    this.scope = {
      includes: (namespace) => watchNamespaces === undefined || watchNamespaces.includes(namespace ?? ""),
      ignored: (object, controller) =>
        options.log.warn(
          { controller, key: objectKey(object.metadata.namespace, object.metadata.name) },
          `${object.kind} outside the operator's namespaces (REMRAM_WATCH_NAMESPACES); ignored`,
        ),
    };
  }

  get controllers(): Controller[] {
    return this.declared.map(({ controller }) => controller);
  }

  cache<T extends KubeObject>(kind: GroupVersionKind, labelSelector?: string, namespace?: string): Cache<T> {
    return this.sharedCache(kind, labelSelector, namespace) as Cache<KubeObject> as Cache<T>;
  }

  add(declaration: ControllerDeclaration): Controller {
    const { name } = declaration;
    const primary = this.sharedCache(declaration.for);
    const controller = new Controller({
      name,
      reconcile: declaration.reconcile,
      listKeys: () =>
        primary
          .list()
          .filter((object) => this.scope.includes(object.metadata.namespace))
          .map((object) => objectKey(object.metadata.namespace, object.metadata.name)),
      metrics: this.metrics,
      log: this.log.child({ controller: name }),
      ...(this.options.resyncMs !== undefined ? { resyncMs: this.options.resyncMs } : {}),
    });
    for (const route of eventRoutes(declaration, this.scope)) {
      const { kind, labelSelector, namespace } = route.source;
      this.sharedCache(kind, labelSelector, namespace).subscribe((object, event) => {
        for (const key of route.keys(object, event)) controller.enqueue(key);
      });
    }
    this.declared.push({ declaration, controller });
    return controller;
  }

  /** controller-runtime's AddReadyzCheck: /readyz fails while this returns a problem. */
  addReadyzCheck(name: string, check: ReadinessCheck): void {
    this.readiness[name] = check;
  }

  /** Fill the caches, open the probe server, then campaign; the controllers start once this replica leads. */
  async start(): Promise<void> {
    this.started = true;
    await Promise.all(this.informers().map((each) => each.start()));
    const { probePort, leaseName } = this.options;
    if (probePort !== undefined && probePort > 0) {
      this.probeServer = await startProbeServer({
        port: probePort,
        registry: this.metrics.registry,
        readiness: this.readiness,
      });
    }
    this.elector = new LeaderElector({
      // Lease renewals get their own client so `client.totalWrites()` counts reconcile writes only.
      client: this.restClient(),
      namespace: this.options.leaseNamespace,
      name: leaseName,
      identity: this.options.identity,
      log: this.log,
      onStartedLeading: () => {
        this.metrics.leaderStatus.set({ name: leaseName }, 1);
        for (const controller of this.controllers) controller.start();
      },
      onStoppedLeading: () => {
        this.metrics.leaderStatus.set({ name: leaseName }, 0);
        this.signalLost();
      },
    });
    this.metrics.leaderStatus.set({ name: leaseName }, 0);
    this.elector.start();
  }

  isLeader(): boolean {
    return this.elector?.isLeader() ?? false;
  }

  /** Stop intake, finish in-flight reconciles, release what the controllers hold, stop the caches, hand back the Lease. */
  async stop(): Promise<void> {
    await Promise.all(this.controllers.map((each) => each.stop()));
    for (const { declaration } of this.declared) declaration.onStop?.();
    await Promise.all(this.informers().map((each) => each.stop()));
    await this.elector?.stop();
    this.metrics.leaderStatus.set({ name: this.options.leaseName }, 0);
    const server = this.probeServer;
    await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  }

  private sharedCache(kind: GroupVersionKind, labelSelector?: string, namespace?: string): SharedCache {
    const key = cacheKey(kind, labelSelector, namespace);
    const existing = this.caches.get(key);
    if (existing !== undefined) return existing;
    // An informer added now would never start.
    if (this.started) throw new Error(`cache ${key} requested after the manager started`);
    const created = new SharedCache(
      cacheSources(kind, labelSelector, this.options, namespace),
      (source, onEvent) =>
        new Informer<KubeObject>(this.options.kubeConfig, this.client, {
          ...source,
          onEvent,
          onError: (error, restartInMs) => {
            this.metrics.informerRestarts.inc({ resource: source.name });
            this.log.warn({ resource: source.name, restartInMs, err: error }, "watch failed; restarting");
          },
        }),
    );
    this.caches.set(key, created);
    return created;
  }

  private informers() {
    return [...this.caches.values()].flatMap((cache) => cache.informers);
  }

  private restClient(): KubeClient {
    return new KubeClient(this.options.kubeConfig, {
      observer: (method, code, host) => this.metrics.restRequests.inc({ method, code: String(code), host }),
    });
  }
}
