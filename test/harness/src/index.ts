export { cacheDir, repoRoot, stateDir } from "./paths.js";
export { freePort } from "./ports.js";
export { type ManagedProcess, spawnService, stopAllRecorded, stopProcessGroup } from "./process.js";
export { startKubernetes } from "./services/kubernetes.js";
export { startModelRegistry } from "./services/model-registry.js";
export { startOllama } from "./services/ollama.js";
export { pullModel } from "./services/ollama-transfer.js";
export { startOpenClaw } from "./services/openclaw.js";
export { startOpenSearch } from "./services/opensearch.js";
export {
  type SecuredOpenSearchEndpoints,
  securedGet,
  startSecuredOpenSearch,
} from "./services/opensearch-secured.js";
export { listContainerIds } from "./services/podman/api.js";
export { localContainer, localImages } from "./services/podman/testcontainers.js";
export {
  type PrometheusEndpoints,
  type PromSeries,
  queryPrometheus,
  type ScrapeTarget,
  startPrometheus,
} from "./services/prometheus.js";
export { type S3Endpoints, startS3Server } from "./services/s3.js";
export type * from "./services/types.js";
export { startTestbed, type TestbedEndpoints } from "./testbed.js";
export { onnxEmbeddingModel } from "./versions.js";
export { httpReady, waitFor } from "./wait.js";
