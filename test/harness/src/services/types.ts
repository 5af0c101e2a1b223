import type { ManagedProcess } from "../process.js";

/** Options every service starter accepts. */
export interface StartOptions {
  /** Keep the processes alive after this Node process exits (used by `make infra-up`). */
  detach?: boolean;
  /** Overall readiness limit; each starter has its own sensible default. */
  timeoutMs?: number;
}

/** A started part of the test bed: its processes and how to stop them (by PID, process group included). */
export interface RunningService {
  readonly processes: readonly ManagedProcess[];
  stop(): Promise<void>;
}

export interface OpenSearchEndpoints {
  /** Base URL, e.g. http://127.0.0.1:41234 (plain HTTP, no auth: the integ-test distribution has no security plugin). */
  url: string;
}

/** The test-bed models hack/install-ollama.sh registers (names pinned in hack/versions.env). */
export interface TestbedModels {
  /** The 384-dimension MiniLM embedding model. */
  embedModel: string;
  /** The SmolLM2 chat model. */
  chatModel: string;
  /**
   * SmolLM2 under a few-shot template (hack/ollama/fewshot.Modelfile): a reflection run gets the person's statement
   * back as a delta, an agent offered tools reads the artifact the person names. For checks that need a predictable
   * model answer.
   */
  fewshotModel: string;
}

export interface OllamaEndpoints extends Omit<TestbedModels, "fewshotModel"> {
  /** Native Ollama API root (no /v1), e.g. http://127.0.0.1:41235 */
  url: string;
}

/** The test bed's model registry: Ollama pulls the test-bed models from it as it would from a real registry. */
export interface ModelRegistryEndpoints {
  /** Registry API root as pullers name it (plain HTTP, no auth), e.g. http://127.0.0.1:41237 */
  url: string;
  /** Root of the static server that the registry redirects blob downloads to, e.g. http://localhost:41238/ */
  blobUrl: string;
  /** The embedding model as `ollama pull` names it here, e.g. 127.0.0.1:41237/library/all-minilm-l6-v2:latest */
  embedModel: string;
  /** The chat model, named the same way. Pulls need Ollama's insecure flag (plain HTTP). */
  chatModel: string;
  /** The few-shot SmolLM2 (TestbedModels.fewshotModel), named the same way. */
  fewshotModel: string;
}

export interface KubernetesEndpoints {
  /** https URL of kube-apiserver. */
  server: string;
  /** Path of an admin kubeconfig (system:masters) for this cluster. */
  kubeconfig: string;
  /** The bearer token in that kubeconfig. */
  token: string;
  /** The serving certificate is self-signed: clients skip TLS verification. Tests act as other users by impersonation. */
  caInsecure: true;
  /** Present when the test bed runs the real node beside kwok. */
  node?: RealNodeEndpoints;
}

/** The appliance's images as hack/install-images.sh built them (test-bed stand-ins for OpenSearch and Ollama). */
export interface AppImages {
  operator: string;
  cortex: string;
  /** remram-app, which the operator deploys beside Cortex. */
  app: string;
  hooks: string;
  gateway: string;
  opensearch: string;
  ollama: string;
  /** The previous release's own images and chart (UPGRADE_FROM_COMMIT), which the real-node suite upgrades from. */
  previous: PreviousRelease;
}

export interface PreviousRelease {
  commit: string;
  /** Its chart directory, from its tree in the cache. */
  chart: string;
  operator: string;
  cortex: string;
  hooks: string;
}

/** The real node (kubelet + containerd in a network namespace) registered with the test bed's control plane. */
export interface RealNodeEndpoints {
  name: string;
  /** InternalIP, reachable from the host (pods and ClusterIPs are routed through it too). */
  ip: string;
  podCidr: string;
  clusterDns: string;
  /** The network namespace the node's processes run in. */
  namespace: string;
  containerdSocket: string;
  /** Images imported into the node's containerd, by role (pods use them with imagePullPolicy: Never). */
  images: { coredns: string; localPath: string; busybox: string; traefik: string; app: AppImages };
  /** The ingress controller (Traefik, as k3s ships it) on the node's address. */
  ingress: IngressEndpoints;
  /** What a real-node pod needs to land there (and nowhere else): the node's label and its taint's toleration. */
  nodeSelector: Record<string, string>;
  tolerations: { key: string; operator: "Exists" }[];
  /** Annotations that place every pod of a namespace on the real node (e.g. the operator's children). */
  namespaceAnnotations: Record<string, string>;
  /** The model registry as pods name it (through a Service), when the registry service runs too. */
  modelRegistry?: ModelRegistryEndpoints;
}

/** Traefik's entrypoints on the real node's address (ports 80 and 443), for Ingresses of its class. */
export interface IngressEndpoints {
  /** The `web` entrypoint: http://<node IP> (port 80); route by the Host header. */
  http: string;
  /** The `websecure` entrypoint: https://<node IP> (port 443), certificates from the Ingresses' TLS Secrets. */
  https: string;
  /** The default IngressClass, set on Ingresses that name none. */
  className: string;
  /** The address Traefik writes into each Ingress's status.loadBalancer.ingress. */
  ip: string;
}

/** podman's Docker-compatible API, for testcontainers (see services/podman/testcontainers.ts). */
export interface PodmanEndpoints {
  /** The API's unix socket. */
  socket: string;
  /** DOCKER_HOST for testcontainers: unix://<socket>. */
  dockerHost: string;
  /** Where published container ports are reached: the service's end of its veth, inside its network namespace. */
  host: string;
  /** The network namespace the service and its bridge run in. */
  namespace: string;
  /** The bridge network containers join by default; container-to-container traffic uses addresses on it. */
  network: string;
}

export interface OpenClawEndpoints {
  /** Gateway HTTP root, e.g. http://127.0.0.1:41236 */
  url: string;
  /** Gateway bearer token. */
  token: string;
  /** HOME used by this gateway (its .openclaw state lives beneath). */
  home: string;
}

/** What each `startX()` resolves to. */
export interface Started<E> extends RunningService {
  readonly endpoints: E;
}
