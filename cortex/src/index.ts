/** Public surface of the cortex package: the app factory, its context, the store and the schemas. */
export { type BuildAppOptions, buildApp, type CortexContext } from "./app.js";
export { ConfigError, type CortexConfig, cortexConfig, loadConfig } from "./config.js";
export * from "./schemas/index.js";
export { createOllamaEmbedder, type Embedder } from "./store/embedder.js";
export * from "./store/opensearch.js";
export * from "./store/templates.js";
