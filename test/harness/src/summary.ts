import { envFile, logDir } from "./paths.js";
import type { TestbedEndpoints } from "./testbed.js";

/** Shell-sourceable KEY=value lines, one per endpoint (`set -a; . .remram/env`). */
export function renderEnvFile(endpoints: TestbedEndpoints): string {
  const lines: string[] = ["# Written by `make infra-up`; removed by `make infra-down`."];
  const add = (key: string, value: string): void => {
    lines.push(`${key}=${shellQuote(value)}`);
  };
  if (endpoints.opensearch) add("REMRAM_OPENSEARCH_URL", endpoints.opensearch.url);
  if (endpoints.ollama) {
    add("REMRAM_OLLAMA_URL", endpoints.ollama.url);
    add("REMRAM_OLLAMA_EMBED_MODEL", endpoints.ollama.embedModel);
    add("REMRAM_OLLAMA_CHAT_MODEL", endpoints.ollama.chatModel);
  }
  if (endpoints.registry) {
    add("REMRAM_MODEL_REGISTRY_URL", endpoints.registry.url);
    add("REMRAM_MODEL_REGISTRY_EMBED_MODEL", endpoints.registry.embedModel);
    add("REMRAM_MODEL_REGISTRY_CHAT_MODEL", endpoints.registry.chatModel);
    add("REMRAM_MODEL_REGISTRY_FEWSHOT_MODEL", endpoints.registry.fewshotModel);
  }
  if (endpoints.kubernetes) {
    add("REMRAM_KUBE_SERVER", endpoints.kubernetes.server);
    add("KUBECONFIG", endpoints.kubernetes.kubeconfig);
  }
  if (endpoints.podman) {
    // What testcontainers (and the docker CLI) read: the podman service, its namespace's address, no Ryuk.
    add("DOCKER_HOST", endpoints.podman.dockerHost);
    add("TESTCONTAINERS_HOST_OVERRIDE", endpoints.podman.host);
    add("TESTCONTAINERS_RYUK_DISABLED", "true");
  }
  return `${lines.join("\n")}\n`;
}

function shellQuote(value: string): string {
  return /^[\w@%+=:,./-]+$/.test(value) ? value : `'${value.replaceAll("'", `'\\''`)}'`;
}

/** What `make demo` prints: each service, where it listens, and how to use it. */
export function renderSummary(endpoints: TestbedEndpoints): string {
  const rows: string[] = [];
  if (endpoints.opensearch) rows.push(`  OpenSearch + k-NN   ${endpoints.opensearch.url}`);
  if (endpoints.ollama) {
    rows.push(
      `  Ollama              ${endpoints.ollama.url}  (embed: ${endpoints.ollama.embedModel}, chat: ${endpoints.ollama.chatModel})`,
    );
  }
  if (endpoints.registry) {
    rows.push(
      `  model registry      ${endpoints.registry.url}  (blobs from ${endpoints.registry.blobUrl}; ollama pull --insecure ${endpoints.registry.embedModel})`,
    );
  }
  if (endpoints.kubernetes) {
    rows.push(`  kube-apiserver      ${endpoints.kubernetes.server}  (kwok fake nodes, KUBECONFIG below)`);
  }
  if (endpoints.node) {
    rows.push(
      `  real node           ${endpoints.node.name} at ${endpoints.node.ip} (network namespace ${endpoints.node.namespace}; pods ${endpoints.node.podCidr}, DNS ${endpoints.node.clusterDns})`,
      `  ingress (Traefik)   ${endpoints.node.ingress.http}  ${endpoints.node.ingress.https}  (IngressClass ${endpoints.node.ingress.className}, the default)`,
    );
    if (endpoints.node.modelRegistry) {
      rows.push(
        `  registry for pods   ${endpoints.node.modelRegistry.url}  (pods pull ${endpoints.node.modelRegistry.embedModel})`,
      );
    }
  }
  if (endpoints.podman) {
    rows.push(
      `  podman (Docker API)  ${endpoints.podman.dockerHost}  (network namespace ${endpoints.podman.namespace}; published ports on ${endpoints.podman.host})`,
    );
  }
  return [
    "Remram test bed is running:",
    ...rows,
    "",
    `Endpoints: ${envFile}  (set -a; . ${envFile}; set +a)`,
    endpoints.kubernetes ? `Try:       KUBECONFIG=${endpoints.kubernetes.kubeconfig} kubectl get nodes` : "",
    `Logs:      ${logDir}`,
    "Stop:      make infra-down",
  ]
    .filter((line) => line !== "")
    .join("\n");
}
