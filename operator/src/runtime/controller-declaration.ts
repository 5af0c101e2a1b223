/**
 * What a controller declares, in controller-runtime's For/Owns/Watches shape: the kind it reconciles, the kinds it
 * creates (an event maps to their controlling owner) and other kinds whose events concern it (an event maps through
 * a function to keys). The manager subscribes each to a shared cache; the mapping itself is pure and lives here.
 */
import type { Reconcile } from "./controller.js";
import type { InformerEvent } from "./informer.js";
import type { GroupVersionKind, KubeObject } from "./kube-client.js";
import { controllerOwnerKey, objectKey, splitKey } from "./owner.js";

/** A kind, narrowed by a label selector: which objects a controller sees of it. */
export interface Selection {
  kind: GroupVersionKind;
  labelSelector?: string;
  /** Watch this namespace only, whatever the operator's namespaces (a cluster add-on's objects, e.g. kube-system's). */
  namespace?: string;
}

export interface Watch extends Selection {
  /** Keys of the reconciled kind this event concerns. Method syntax: a watch may take a narrower object type. */
  map(object: KubeObject, event: InformerEvent): readonly string[];
}

export interface ControllerDeclaration {
  name: string;
  /** The reconciled kind: an event enqueues the object's own key. */
  for: GroupVersionKind;
  /** Kinds it creates with a controller ownerReference to the reconciled kind: an event enqueues that owner. */
  owns?: readonly Selection[];
  watches?: readonly Watch[];
  reconcile: Reconcile;
  /** Called once every controller has stopped, before the caches stop. */
  onStop?: () => void;
}

/** Which objects are this operator's to reconcile. */
export interface NamespaceScope {
  includes(namespace: string | undefined): boolean;
  /** Told of a reconciled-kind object outside the scope (another operator's, or misplaced). */
  ignored(object: KubeObject, controller: string): void;
}

/** A subscription: the cache it reads and the keys an event there enqueues. */
export interface EventRoute {
  source: Selection;
  keys(object: KubeObject, event: InformerEvent): readonly string[];
}

/** For → the object's key, Owns → its controlling owner's key, Watches → the map; only keys inside the scope. */
export function eventRoutes(declaration: ControllerDeclaration, scope: NamespaceScope): EventRoute[] {
  const owner = declaration.for;
  const inScope = (keys: readonly (string | undefined)[]): string[] =>
    keys.filter((key): key is string => key !== undefined && scope.includes(splitKey(key).namespace));
  const self: EventRoute = {
    source: { kind: owner },
    keys: (object) => {
      if (scope.includes(object.metadata.namespace))
        return [objectKey(object.metadata.namespace, object.metadata.name)];
      scope.ignored(object, declaration.name);
      return [];
    },
  };
  const owned = (declaration.owns ?? []).map(
    (source): EventRoute => ({
      source,
      keys: (child) => inScope([controllerOwnerKey(child, owner.apiVersion, owner.kind)]),
    }),
  );
  const watched = (declaration.watches ?? []).map(
    (watch): EventRoute => ({
      source: {
        kind: watch.kind,
        ...(watch.labelSelector ? { labelSelector: watch.labelSelector } : {}),
        ...(watch.namespace ? { namespace: watch.namespace } : {}),
      },
      keys: (object, event) => inScope(watch.map(object, event)),
    }),
  );
  return [self, ...owned, ...watched];
}
