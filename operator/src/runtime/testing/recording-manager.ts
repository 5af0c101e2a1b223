// A Manager that records what the controllers' setups declare and which caches they read, over in-memory caches;
// nothing runs. Test support only (excluded from the operator's build).
import { pino } from "pino";
import { type Cache, cacheKey } from "../cache.js";
import { Controller } from "../controller.js";
import type { ControllerDeclaration, Selection } from "../controller-declaration.js";
import type { EventRecorder } from "../events.js";
import type { GroupVersionKind, KubeClient, KubeObject } from "../kube-client.js";
import type { Manager } from "../manager.js";
import { OperatorMetrics } from "../metrics.js";

/** A cache the test fills. */
export class MemoryCache implements Cache<KubeObject> {
  objects: KubeObject[] = [];

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    return this.objects.find((each) => each.metadata.namespace === namespace && each.metadata.name === name);
  }

  list(namespace?: string): readonly KubeObject[] {
    return this.objects.filter((each) => namespace === undefined || each.metadata.namespace === namespace);
  }
}

export class RecordingManager implements Manager {
  // The setups only hand these to reconcilers, which never run here.
  readonly client = {} as KubeClient;
  readonly events = {} as EventRecorder;
  readonly metrics = new OperatorMetrics();
  readonly log = pino({ level: "silent" });
  readonly now = () => 0;
  /** By cacheKey: group/version/kind and label selector. */
  readonly caches = new Map<string, MemoryCache>();
  /** Every distinct cache asked for, in order. */
  readonly selections: Selection[] = [];
  readonly declarations: ControllerDeclaration[] = [];

  cache<T extends KubeObject>(kind: GroupVersionKind, labelSelector?: string, namespace?: string): Cache<T> {
    const key = cacheKey(kind, labelSelector, namespace);
    let cache = this.caches.get(key);
    if (cache === undefined) {
      cache = new MemoryCache();
      this.caches.set(key, cache);
      this.selections.push({
        kind,
        ...(labelSelector ? { labelSelector } : {}),
        ...(namespace ? { namespace } : {}),
      });
    }
    return cache as Cache<KubeObject> as Cache<T>;
  }

  add(declaration: ControllerDeclaration): Controller {
    this.declarations.push(declaration);
    return new Controller({
      name: declaration.name,
      reconcile: declaration.reconcile,
      listKeys: () => [],
      log: this.log,
    });
  }

  declaration(name: string): ControllerDeclaration {
    const found = this.declarations.find((each) => each.name === name);
    if (found === undefined) throw new Error(`no controller ${name} declared`);
    return found;
  }
}
