/**
 * Cortex's wire contract: the request and response schemas of its HTTP API, once, for Cortex's routes, the
 * operator's Cortex client and the hooks plugin; `routes` names every route with its schemas and
 * `openApiDocument()` describes them (contract/openapi.json).
 */
export * from "./archive.js";
export * from "./backup.js";
export * from "./bundle.js";
export * from "./bundle-intent.js";
export * from "./callers.js";
export * from "./common.js";
export * from "./consistency.js";
export * from "./dimensions.js";
export * from "./dream.js";
export * from "./embeddings.js";
export * from "./errors.js";
export * from "./explicit-save.js";
export * from "./health.js";
export * from "./ingest.js";
export * from "./knowledge.js";
export * from "./memory-tools.js";
export * from "./migrations.js";
export * from "./openapi.js";
export * from "./person-export.js";
export * from "./person-knowledge.js";
export * from "./promote.js";
export * from "./reflect.js";
export * from "./retrieve.js";
export * from "./routes.js";
export * from "./storage.js";
