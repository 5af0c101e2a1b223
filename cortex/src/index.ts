/** Public surface of the cortex package: the app factory, its context and the store (the schemas are @remram/contract). */
export { type BuildAppOptions, buildApp } from "./app.js";
export { ConfigError, type CortexConfig, cortexConfig, loadConfig } from "./config.js";
export type { CortexContext } from "./context.js";
export * from "./store/client.js";
export * from "./store/counters.js";
export * from "./store/documents.js";
export { createOllamaEmbedder, type Embedder } from "./store/embedder.js";
export * from "./store/indices.js";
export * from "./store/reads.js";
export * from "./store/templates.js";
export * from "./store/writes.js";
