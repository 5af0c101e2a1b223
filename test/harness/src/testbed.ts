import { startK3sContainer, startOllamaContainer, startOpenSearchContainer } from "./backends/containers.js";
import { startKubernetes } from "./services/kubernetes.js";
import { startOllama } from "./services/ollama.js";
import { startOpenSearch } from "./services/opensearch.js";
import { startPodman } from "./services/podman/index.js";
import type {
  KubernetesEndpoints,
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
  "kubernetes",
  "node",
  "podman",
];

type StartedService = Exclude<TestbedServiceName, "node">;
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
  if (containers && selected.includes("podman") && options.services !== undefined) {
    throw new Error(
      "the podman service runs with the process backend only (the containers backend's Docker engine serves testcontainers)",
    );
  }
  const realNode = !containers && selected.includes("node");
  const starters: Partial<Starters> = containers ? containerStarters : processStarters;
  const names = [...new Set(selected.map((name) => (name === "node" ? "kubernetes" : name)))];
  // A service the backend has no starter for (podman with containers) is left out of the default selection.
  const chosen = names.flatMap((name) => {
    const start = starters[name];
    return start === undefined ? [] : [{ name, start }];
  });
  const services: RunningService[] = [];
  const endpoints: TestbedEndpoints = {};
  const failures: string[] = [];
  await Promise.all(
    chosen.map(async ({ name, start }) => {
      try {
        const service = await start({ ...options, realNode });
        services.push(service);
        Object.assign(endpoints, { [name]: service.endpoints });
        if (name === "kubernetes" && "node" in service.endpoints && service.endpoints.node) {
          endpoints.node = service.endpoints.node;
        }
      } catch (error) {
        failures.push(`${name}: ${error instanceof Error ? error.message : String(error)}`);
      }
    }),
  );
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
