/**
 * Second test-bed backend for machines with a Docker engine (REMRAM_TESTBED_BACKEND=containers): the same
 * endpoints from testcontainers' OpenSearch, Ollama and K3s modules. The local-process backend stays the default
 * and the one CI runs. Differences: K3s has one real node and no kwok, so suites that create kwok fake nodes
 * need the process backend; Ollama pulls its models from the model library instead of the PyPI wheels.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { K3sContainer } from "@testcontainers/k3s";
import { OllamaContainer } from "@testcontainers/ollama";
import { OpenSearchContainer } from "@testcontainers/opensearch";
import type { StartedTestContainer } from "testcontainers";
import { runDir } from "../paths.js";
import type {
  KubernetesEndpoints,
  OllamaEndpoints,
  OpenSearchEndpoints,
  Started,
} from "../services/types.js";

/** Images pinned to the versions the process backend builds (hack/versions.env). */
export const containerImages = {
  opensearch: "opensearchproject/opensearch:2.19.1",
  ollama: "ollama/ollama:0.24.0",
  k3s: "rancher/k3s:v1.34.4-k3s1",
} as const;

/** Ollama library names of the same two models the process backend registers from PyPI wheels. */
const libraryModels = { embed: "all-minilm:l6-v2", chat: "smollm2:135m" } as const;

function started<E>(container: StartedTestContainer, endpoints: E): Started<E> {
  return {
    endpoints,
    processes: [],
    async stop() {
      await container.stop();
    },
  };
}

export async function startOpenSearchContainer(): Promise<Started<OpenSearchEndpoints>> {
  // The full image ships k-NN and analysis-common; security off matches the integ-test distribution.
  const container = await new OpenSearchContainer(containerImages.opensearch)
    .withSecurityEnabled(false)
    .start();
  return started(container, { url: container.getHttpUrl() });
}

export async function startOllamaContainer(): Promise<Started<OllamaEndpoints>> {
  const container = await new OllamaContainer(containerImages.ollama).start();
  for (const model of Object.values(libraryModels)) {
    const pull = await container.exec(["ollama", "pull", model]);
    if (pull.exitCode !== 0) {
      await container.stop();
      throw new Error(`ollama pull ${model} failed in the container: ${pull.output.slice(-500)}`);
    }
  }
  return started(container, {
    url: container.getEndpoint(),
    embedModel: libraryModels.embed,
    chatModel: libraryModels.chat,
  });
}

/**
 * K3s hands out a client-certificate kubeconfig; tests expect an admin bearer token like the process backend's,
 * so create a cluster-admin ServiceAccount inside the cluster and write a token kubeconfig for it.
 */
export async function startK3sContainer(): Promise<Started<KubernetesEndpoints>> {
  const container = await new K3sContainer(containerImages.k3s).start();
  const run = async (args: string[]): Promise<string> => {
    const result = await container.exec(["kubectl", ...args]);
    if (result.exitCode !== 0) {
      await container.stop();
      throw new Error(`kubectl ${args.join(" ")} failed in K3s: ${result.output.slice(-500)}`);
    }
    return result.output.trim();
  };
  await run(["-n", "kube-system", "create", "serviceaccount", "remram-test-admin"]);
  await run([
    "create",
    "clusterrolebinding",
    "remram-test-admin",
    "--clusterrole=cluster-admin",
    "--serviceaccount=kube-system:remram-test-admin",
  ]);
  const token = await run(["-n", "kube-system", "create", "token", "remram-test-admin", "--duration=24h"]);
  const server = `https://${container.getHost()}:${container.getMappedPort(6443)}`;
  const directory = join(runDir, `k3s-${container.getId().slice(0, 12)}`);
  mkdirSync(directory, { recursive: true });
  const kubeconfig = join(directory, "admin.kubeconfig");
  writeFileSync(kubeconfig, tokenKubeconfig(server, token), { mode: 0o600 });
  return started(container, { server, kubeconfig, token, caInsecure: true });
}

/** A kubeconfig for one bearer token against a self-signed API server. */
export function tokenKubeconfig(server: string, token: string): string {
  return `${JSON.stringify(
    {
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "remram-test", cluster: { server, "insecure-skip-tls-verify": true } }],
      users: [{ name: "admin", user: { token } }],
      contexts: [{ name: "remram-test", context: { cluster: "remram-test", user: "admin" } }],
      "current-context": "remram-test",
    },
    null,
    2,
  )}\n`;
}
