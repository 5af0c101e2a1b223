/**
 * The operator's one door to the API server for everything except watches: typed JSON requests with the right
 * patch content types, server-side apply under one field manager, status only through /status, and a count of
 * every request by verb and code (rest_client_requests_total; tests use it to prove a converged reconcile writes
 * nothing).
 */
import { request as httpRequest, type RequestOptions } from "node:http";
import { request as httpsRequest } from "node:https";
import type { KubeConfig } from "@kubernetes/client-node";

export const fieldManager = "remram-operator";

export interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    generation?: number;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: OwnerReference[];
    finalizers?: string[];
    deletionTimestamp?: string;
    creationTimestamp?: string;
  };
}

export interface OwnerReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

export class KubeApiError extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    message: string,
  ) {
    super(message);
    this.name = "KubeApiError";
  }
}

/** Plural resource names of every kind the operator reads or writes. */
const resources: Record<string, { plural: string; namespaced: boolean }> = {
  Namespace: { plural: "namespaces", namespaced: false },
  Node: { plural: "nodes", namespaced: false },
  Service: { plural: "services", namespaced: true },
  Secret: { plural: "secrets", namespaced: true },
  ConfigMap: { plural: "configmaps", namespaced: true },
  PersistentVolumeClaim: { plural: "persistentvolumeclaims", namespaced: true },
  ServiceAccount: { plural: "serviceaccounts", namespaced: true },
  Pod: { plural: "pods", namespaced: true },
  Deployment: { plural: "deployments", namespaced: true },
  StatefulSet: { plural: "statefulsets", namespaced: true },
  DaemonSet: { plural: "daemonsets", namespaced: true },
  RuntimeClass: { plural: "runtimeclasses", namespaced: false },
  Lease: { plural: "leases", namespaced: true },
  Event: { plural: "events", namespaced: true },
  NetworkPolicy: { plural: "networkpolicies", namespaced: true },
  Ingress: { plural: "ingresses", namespaced: true },
  EndpointSlice: { plural: "endpointslices", namespaced: true },
  Role: { plural: "roles", namespaced: true },
  RoleBinding: { plural: "rolebindings", namespaced: true },
  // cert-manager's (cert-manager.io/v1), applied only where its CRDs are served.
  Certificate: { plural: "certificates", namespaced: true },
  Issuer: { plural: "issuers", namespaced: true },
  CustomResourceDefinition: { plural: "customresourcedefinitions", namespaced: false },
  RemramAppliance: { plural: "remramappliances", namespaced: true },
  DreamSchedule: { plural: "dreamschedules", namespaced: true },
  DimensionPolicy: { plural: "dimensionpolicies", namespaced: true },
  ArtifactProposal: { plural: "artifactproposals", namespaced: true },
};

/** A kind as the API names it, e.g. { apiVersion: "apps/v1", kind: "Deployment" }. */
export interface GroupVersionKind {
  apiVersion: string;
  kind: string;
}

export function resourceOf(kind: string): { plural: string; namespaced: boolean } {
  const resource = resources[kind];
  if (resource === undefined) throw new Error(`no resource mapping for kind ${kind}`);
  return resource;
}

/** /api/v1/namespaces/ns/services/name, /apis/apps/v1/... and so on. */
export function resourcePath(apiVersion: string, kind: string, namespace?: string, name?: string): string {
  const resource = resourceOf(kind);
  const prefix = apiVersion.includes("/") ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
  const scope =
    resource.namespaced && namespace !== undefined ? `/namespaces/${encodeURIComponent(namespace)}` : "";
  const suffix = name === undefined ? "" : `/${encodeURIComponent(name)}`;
  return `${prefix}${scope}/${resource.plural}${suffix}`;
}

export function objectPath(object: KubeObject): string {
  return resourcePath(object.apiVersion, object.kind, object.metadata.namespace, object.metadata.name);
}

export type RequestObserver = (method: string, code: number, host: string) => void;

export interface KubeClientOptions {
  /** Act as another user (tests, and the kubectl plugin never needs it). */
  impersonate?: { user: string; groups?: string[] };
  observer?: RequestObserver;
  timeoutMs?: number;
  /** Field manager for every write; the operator's by default, the plugin's for kubectl-remram. */
  fieldManager?: string;
}

interface SendOptions {
  query?: Record<string, string | undefined>;
  body?: unknown;
  contentType?: string;
}

export class KubeClient {
  private readonly server: URL;
  /** Requests that changed or could change state, by verb: what "zero writes when converged" counts. */
  readonly writes = { POST: 0, PUT: 0, PATCH: 0, DELETE: 0 };

  constructor(
    readonly config: KubeConfig,
    private readonly options: KubeClientOptions = {},
  ) {
    const cluster = config.getCurrentCluster();
    if (cluster === null) throw new Error("the kubeconfig has no current cluster");
    this.server = new URL(cluster.server);
  }

  /** A client for the same cluster acting as another user (needs `impersonate` RBAC). */
  as(user: string, groups?: string[]): KubeClient {
    return new KubeClient(this.config, {
      ...this.options,
      impersonate: { user, ...(groups ? { groups } : {}) },
    });
  }

  async send<T>(method: string, path: string, options: SendOptions = {}): Promise<T> {
    const url = new URL(path, this.server);
    for (const [key, value] of Object.entries(options.query ?? {})) {
      if (value !== undefined) url.searchParams.set(key, value);
    }
    const headers: Record<string, string | string[]> = { Accept: "application/json" };
    const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
    if (payload !== undefined) headers["Content-Type"] = options.contentType ?? "application/json";
    if (this.options.impersonate) {
      headers["Impersonate-User"] = this.options.impersonate.user;
      if (this.options.impersonate.groups) headers["Impersonate-Group"] = this.options.impersonate.groups;
    }
    const requestOptions: RequestOptions = {
      method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port,
      path: `${url.pathname}${url.search}`,
      headers,
      timeout: this.options.timeoutMs ?? 30_000,
    };
    await this.config.applyToHTTPSOptions(requestOptions);
    if (method in this.writes) this.writes[method as keyof typeof this.writes]++;
    const { status, text } = await exchange(url.protocol, requestOptions, payload);
    this.options.observer?.(method, status, this.server.host);
    const parsed = text === "" ? undefined : safeJson(text);
    if (status >= 200 && status < 300) return parsed as T;
    const statusBody = (parsed ?? {}) as { reason?: string; message?: string };
    throw new KubeApiError(
      status,
      statusBody.reason ?? "Unknown",
      statusBody.message ?? `${method} ${url.pathname} answered ${status}`,
    );
  }

  /** GET, with 404 as undefined. */
  async get<T>(path: string): Promise<T | undefined> {
    try {
      return await this.send<T>("GET", path);
    } catch (error) {
      if (error instanceof KubeApiError && error.status === 404) return undefined;
      throw error;
    }
  }

  private get manager(): string {
    return this.options.fieldManager ?? fieldManager;
  }

  /** Server-side apply of the fields in `object`, forcing ownership: the operator owns what it applies. */
  apply<T extends KubeObject>(object: T): Promise<T> {
    return this.send<T>("PATCH", objectPath(object), {
      query: { fieldManager: this.manager, force: "true" },
      body: object,
      contentType: "application/apply-patch+yaml",
    });
  }

  /** Server-side apply to the /status subresource; only the status fields in `object` are owned. */
  applyStatus<T extends KubeObject>(object: T): Promise<T> {
    return this.send<T>("PATCH", `${objectPath(object)}/status`, {
      query: { fieldManager: this.manager, force: "true" },
      body: object,
      contentType: "application/apply-patch+yaml",
    });
  }

  mergePatch<T>(path: string, patch: unknown): Promise<T> {
    return this.send<T>("PATCH", path, {
      query: { fieldManager: this.manager },
      body: patch,
      contentType: "application/merge-patch+json",
    });
  }

  jsonPatch<T>(path: string, operations: unknown[]): Promise<T> {
    return this.send<T>("PATCH", path, {
      query: { fieldManager: this.manager },
      body: operations,
      contentType: "application/json-patch+json",
    });
  }

  create<T>(path: string, body: unknown): Promise<T> {
    return this.send<T>("POST", path, { query: { fieldManager: this.manager }, body });
  }

  replace<T>(path: string, body: unknown): Promise<T> {
    return this.send<T>("PUT", path, { query: { fieldManager: this.manager }, body });
  }

  async delete(path: string): Promise<void> {
    try {
      await this.send("DELETE", path, { body: { propagationPolicy: "Background" } });
    } catch (error) {
      if (!(error instanceof KubeApiError && error.status === 404)) throw error;
    }
  }

  totalWrites(): number {
    return this.writes.POST + this.writes.PUT + this.writes.PATCH + this.writes.DELETE;
  }
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 500) };
  }
}

function exchange(
  protocol: string,
  options: RequestOptions,
  payload: string | undefined,
): Promise<{ status: number; text: string }> {
  const send = protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise((resolve, reject) => {
    const request = send(options, (response) => {
      const chunks: Buffer[] = [];
      response.on("data", (chunk: Buffer) => chunks.push(chunk));
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, text: Buffer.concat(chunks).toString("utf8") }),
      );
      response.on("error", reject);
    });
    request.on("timeout", () => request.destroy(new Error(`request to ${options.path} timed out`)));
    request.on("error", reject);
    if (payload !== undefined) request.write(payload);
    request.end();
  });
}
