/**
 * The manager's shared caches: one per kind and label selector, whichever controllers read or watch it. A cache is
 * one informer per namespace it is watched in, read as one, and hands each event to every subscribed handler.
 */
import type { InformerEvent } from "./informer.js";
import { type GroupVersionKind, type KubeObject, resourceOf, resourcePath } from "./kube-client.js";

/** Read access to an informer cache (Informer and SharedCache satisfy it). */
export interface Cache<T> {
  get(namespace: string | undefined, name: string): T | undefined;
  list(namespace?: string): readonly T[];
}

/** One list-watch behind a cache: its name in logs and metrics, its collection path and label selector. */
export interface CacheSource {
  name: string;
  path: string;
  labelSelector?: string;
}

/** The Informer as a shared cache drives it. */
export interface SourceInformer extends Cache<KubeObject> {
  start(): Promise<void>;
  stop(): Promise<void>;
  hasSynced(): boolean;
}

export type EventHandler = (object: KubeObject, event: InformerEvent) => void;

/**
 * The cache key: group/version/kind, label selector and a pinned namespace (otherwise the namespace scope follows
 * from the kind).
 */
export function cacheKey(kind: GroupVersionKind, labelSelector?: string, namespace?: string): string {
  return `${kind.apiVersion}/${kind.kind}${namespace ? `@${namespace}` : ""}${labelSelector ? `?${labelSelector}` : ""}`;
}

/** Where caches watch: namespaced kinds only in watchNamespaces (undefined: all), except clusterWideKinds. */
export interface CacheScope {
  watchNamespaces?: readonly string[];
  /** Namespaced kinds cached across every namespace all the same (objects outside are ignored, not unseen). */
  clusterWideKinds?: readonly GroupVersionKind[];
}

/**
 * The list-watches behind a cache of `kind`: one per watched namespace for a namespaced kind, else one; a pinned
 * namespace (a cluster add-on's objects, outside the appliances' namespaces) is watched alone.
 */
export function cacheSources(
  kind: GroupVersionKind,
  labelSelector: string | undefined,
  scope: CacheScope,
  pinnedNamespace?: string,
): CacheSource[] {
  const { plural, namespaced } = resourceOf(kind.kind);
  const clusterWide = scope.clusterWideKinds?.some((each) => cacheKey(each) === cacheKey(kind));
  const scopes =
    namespaced && pinnedNamespace !== undefined
      ? [pinnedNamespace]
      : namespaced && !clusterWide && scope.watchNamespaces
        ? scope.watchNamespaces
        : [undefined];
  return scopes.map((namespace) => ({
    name: namespace === undefined ? plural : `${plural}@${namespace}`,
    path: resourcePath(kind.apiVersion, kind.kind, namespace),
    ...(labelSelector ? { labelSelector } : {}),
  }));
}

export class SharedCache implements Cache<KubeObject> {
  readonly informers: readonly SourceInformer[];
  private readonly handlers: EventHandler[] = [];

  constructor(
    sources: readonly CacheSource[],
    informer: (source: CacheSource, onEvent: EventHandler) => SourceInformer,
  ) {
    this.informers = sources.map((source) =>
      informer(source, (object, event) => {
        for (const handler of this.handlers) handler(object, event);
      }),
    );
  }

  subscribe(handler: EventHandler): void {
    this.handlers.push(handler);
  }

  get(namespace: string | undefined, name: string): KubeObject | undefined {
    for (const informer of this.informers) {
      const found = informer.get(namespace, name);
      if (found !== undefined) return found;
    }
    return undefined;
  }

  list(namespace?: string): readonly KubeObject[] {
    return this.informers.flatMap((informer) => informer.list(namespace));
  }
}
