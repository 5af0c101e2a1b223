import { startKubernetes } from "./services/kubernetes.js";
import { startOllama } from "./services/ollama.js";
import { startOpenSearch } from "./services/opensearch.js";
import type { KubernetesEndpoints, OllamaEndpoints, OpenSearchEndpoints, RunningService } from "./services/types.js";

/** Endpoints of the shared test bed, handed to integration tests with vitest's provide/inject. */
export interface TestbedEndpoints {
  opensearch: OpenSearchEndpoints;
  ollama: OllamaEndpoints;
  kubernetes: KubernetesEndpoints;
}

export interface RunningTestbed {
  endpoints: TestbedEndpoints;
  services: RunningService[];
  stop(): Promise<void>;
}

/**
 * Start OpenSearch, Ollama and Kubernetes in parallel. If any fails, the ones that did start are stopped
 * before the error propagates, so a failed start never leaves processes behind.
 */
export async function startTestbed(options: { detach?: boolean } = {}): Promise<RunningTestbed> {
  const started: RunningService[] = [];
  const track = <T extends RunningService>(promise: Promise<T>): Promise<T> =>
    promise.then((service) => {
      started.push(service);
      return service;
    });
  const results = await Promise.allSettled([
    track(startOpenSearch(options)),
    track(startOllama(options)),
    track(startKubernetes(options)),
  ]);
  const failures = results.flatMap((result) => (result.status === "rejected" ? [String(result.reason)] : []));
  const stopAll = async (): Promise<void> => {
    await Promise.all(started.map((service) => service.stop()));
  };
  if (failures.length > 0) {
    await stopAll();
    throw new Error(`test bed failed to start:\n${failures.join("\n")}`);
  }
  const [opensearch, ollama, kubernetes] = results as [
    PromiseFulfilledResult<Awaited<ReturnType<typeof startOpenSearch>>>,
    PromiseFulfilledResult<Awaited<ReturnType<typeof startOllama>>>,
    PromiseFulfilledResult<Awaited<ReturnType<typeof startKubernetes>>>,
  ];
  return {
    endpoints: {
      opensearch: opensearch.value.endpoints,
      ollama: ollama.value.endpoints,
      kubernetes: kubernetes.value.endpoints,
    },
    services: started,
    stop: stopAll,
  };
}
