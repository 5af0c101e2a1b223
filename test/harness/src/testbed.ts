import { startK3sContainer, startOllamaContainer, startOpenSearchContainer } from "./backends/containers.js";
import { startKubernetes } from "./services/kubernetes.js";
import { startModelRegistry } from "./services/model-registry.js";
import { startNodeModelRegistry } from "./services/node/model-registry.js";
import { startOllama } from "./services/ollama.js";
import { startOpenSearch } from "./services/opensearch.js";
import { startPodman } from "./services/podman/index.js";
import type {
  KubernetesEndpoints,
  ModelRegistryEndpoints,
  OllamaEndpoints,
  OpenSearchEndpoints,
  PodmanEndpoints,
  RealNodeEndpoints,
  RunningService,
  Started,
  StartOptions,
} from "./services/types.js";

/** Endpoints of the shared test bed, handed to integration tests with vitest's provide/inject. */
export interface TestbedEndpoints {
  opensearch?: OpenSearchEndpoints;
  ollama?: OllamaEndpoints;
  /** The model registry holding the test-bed models; it is seeded from the ollama service (selecting it selects ollama too). */
  registry?: ModelRegistryEndpoints;
  kubernetes?: KubernetesEndpoints;
  /** The real node; it joins the kubernetes service's control plane (selecting it selects kubernetes too). */
  node?: RealNodeEndpoints;
  /** podman's Docker-compatible API in a network namespace of its own, for suites that use testcontainers. */
  podman?: PodmanEndpoints;
}

export type TestbedServiceName = keyof TestbedEndpoints;
export const testbedServiceNames: readonly TestbedServiceName[] = [
  "opensearch",
  "ollama",
  "registry",
  "kubernetes",
  "node",
  "podman",
];

/** Services that start on their own; node and registry build on kubernetes and ollama. */
type StartedService = Exclude<TestbedServiceName, "node" | "registry">;
type StartedEndpoints = NonNullable<TestbedEndpoints[StartedService]>;
type Starters = {
  [K in StartedService]: (
    options: StartOptions & { realNode?: boolean },
  ) => Promise<Started<NonNullable<TestbedEndpoints[K]>>>;
};

/** Local processes from the cache (default, what CI runs). */
const processStarters: Starters = {
  opensearch: startOpenSearch,
  ollama: startOllama,
  kubernetes: startKubernetes,
  podman: startPodman,
};

/**
 * testcontainers, for machines with a Docker engine (see backends/containers.ts for the differences). There the
 * engine itself serves testcontainers: no podman service.
 */
const containerStarters: Omit<Starters, "podman"> = {
  opensearch: startOpenSearchContainer,
  ollama: startOllamaContainer,
  kubernetes: startK3sContainer,
};

export type TestbedBackend = "processes" | "containers";

/** REMRAM_TESTBED_BACKEND picks the backend; anything but the two known names is a clear error. */
export function selectedBackend(value = process.env.REMRAM_TESTBED_BACKEND): TestbedBackend {
  if (value === undefined || value === "" || value === "processes") return "processes";
  if (value === "containers") return "containers";
  throw new Error(`REMRAM_TESTBED_BACKEND must be "processes" (default) or "containers", not "${value}"`);
}

export interface RunningTestbed {
  endpoints: TestbedEndpoints;
  services: RunningService[];
  stop(): Promise<void>;
}

/**
 * Which services to start: REMRAM_TESTBED="opensearch,ollama" narrows it while working on one part;
 * the default (and CI) is all of them.
 */
export function selectedServices(value = process.env.REMRAM_TESTBED): TestbedServiceName[] {
  if (value === undefined || value.trim() === "" || value === "all") return [...testbedServiceNames];
  const names = value.split(",").map((name) => name.trim());
  const unknown = names.filter((name) => !testbedServiceNames.includes(name as TestbedServiceName));
  if (unknown.length > 0) {
    throw new Error(
      `REMRAM_TESTBED names unknown services: ${unknown.join(", ")} (known: ${testbedServiceNames.join(", ")})`,
    );
  }
  return names as TestbedServiceName[];
}

/**
 * What starting `selected` means: the node joins the kubernetes service's control plane and the registry is seeded
 * from the ollama service, so each brings that service along; the container backend has neither of the two, nor podman.
 */
export function servicesToStart(
  selected: readonly TestbedServiceName[],
  backend: TestbedBackend,
): { names: StartedService[]; realNode: boolean; withRegistry: boolean } {
  const implied = { node: "kubernetes", registry: "ollama" } as const;
  const names = selected.map((name) => (name === "node" || name === "registry" ? implied[name] : name));
  return {
    // With the container backend the Docker engine serves testcontainers itself: no podman service.
    names: [...new Set(names)].filter((name) => backend === "processes" || name !== "podman"),
    realNode: backend === "processes" && selected.includes("node"),
    withRegistry: backend === "processes" && selected.includes("registry"),
  };
}

/**
 * Start the selected services in parallel. If any fails, the ones that did start are stopped
 * before the error propagates, so a failed start never leaves processes behind.
 */
export async function startTestbed(
  options: StartOptions & { services?: readonly TestbedServiceName[] } = {},
): Promise<RunningTestbed> {
  const selected = options.services ?? selectedServices();
  const containers = selectedBackend() === "containers";
  if (containers && selected.includes("node") && options.services !== undefined) {
    throw new Error(
      "the real node runs with the process backend only (K3s in a container is a node of its own)",
    );
  }
  if (containers && selected.includes("registry") && options.services !== undefined) {
    throw new Error(
      "the model registry runs with the process backend only (an Ollama in a container cannot push to this host's loopback)",
    );
  }
  if (containers && selected.includes("podman") && options.services !== undefined) {
    throw new Error(
      "the podman service runs with the process backend only (the containers backend's Docker engine serves testcontainers)",
    );
  }
  const { names, realNode, withRegistry } = servicesToStart(
    selected,
    containers ? "containers" : "processes",
  );
  const starters: Partial<Starters> = containers ? containerStarters : processStarters;
  const services: RunningService[] = [];
  const endpoints: TestbedEndpoints = {};
  const failures: string[] = [];
  const record = async <E>(name: string, start: () => Promise<Started<E>>): Promise<E | undefined> => {
    try {
      const service = await start();
      services.push(service);
      return service.endpoints;
    } catch (error) {
      failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      return undefined;
    }
  };
  await Promise.all(
    names.map(async (name) => {
      const start = starters[name];
      if (start === undefined) {
        failures.push(`${name}: no starter with this backend`);
        return;
      }
      const started = await record<StartedEndpoints>(name, () => start({ ...options, realNode }));
      if (started === undefined) return;
      Object.assign(endpoints, { [name]: started });
      if ("node" in started && started.node) endpoints.node = started.node;
      // The registry is seeded from the running Ollama, so it starts once Ollama is up (beside the others).
      if (name === "ollama" && withRegistry && endpoints.ollama) {
        const ollama = endpoints.ollama;
        const registry = await record("registry", () => startModelRegistry({ ...options, ollama }));
        if (registry !== undefined) endpoints.registry = registry;
      }
    }),
  );
  // The node's pods pull from a registry instance of their own, on the node's veth (docs/testbed-models.md).
  const { node, ollama, kubernetes } = endpoints;
  if (realNode && withRegistry && node && ollama && kubernetes) {
    const registry = await record("registry for the node", () =>
      startNodeModelRegistry({ ...options, ollama, kubeconfig: kubernetes.kubeconfig }),
    );
    if (registry !== undefined) endpoints.node = { ...node, modelRegistry: registry };
  }
  // Every service is stopped even when one's stop fails (a teardown check); the failures are reported together.
  const stop = async (): Promise<void> => {
    const results = await Promise.allSettled(services.map((service) => service.stop()));
    const errors = results.flatMap((result) =>
      result.status === "rejected" ? [result.reason as unknown] : [],
    );
    if (errors.length > 0) {
      throw new Error(
        errors.map((error) => (error instanceof Error ? error.message : String(error))).join("\n"),
      );
    }
  };
  if (failures.length > 0) {
    await stop().catch((error: unknown) => {
      failures.push(
        `stopping the started services: ${error instanceof Error ? error.message : String(error)}`,
      );
    });
    throw new Error(`test bed failed to start:\n${failures.join("\n")}`);
  }
  return { endpoints, services, stop };
}
