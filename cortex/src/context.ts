/**
 * What every feature's routes and services use, as `app.cortex`: the storage floor (store, embedder, the dimension
 * policy, usage counters), metrics, settings and the clock. Features import this type, never the app factory.
 */
import type { CortexConfig } from "./config.js";
import type { FullRefusal } from "./http-errors.js";
import type { PolicyHolder } from "./knowledge/dimension-policy.js";
import type { UsageTracker } from "./knowledge/usage.js";
import type { CortexMetrics } from "./metrics.js";
import type { CortexStore } from "./store/client.js";
import type { Embedder } from "./store/embedder.js";

/** How the read path ranks and when it gives up (from the config; the appliance's retrieval settings). */
export interface RetrievalSettings {
  retrieveTimeoutMs: number;
  recencyHalfLifeDays: number;
  lowConfidenceThreshold: number;
  /** Candidates per signal in standard mode (the appliance's retrieval.topK). */
  candidates: number;
  /** Cosine similarity below which a k-NN neighbour is not a candidate. */
  minVectorSimilarity: number;
}

export interface CortexContext {
  config: CortexConfig;
  store: CortexStore;
  embedder: Embedder | null;
  policy: PolicyHolder;
  metrics: CortexMetrics;
  usage: UsageTracker;
  retrieval: RetrievalSettings;
  clock: () => Date;
  /** The last write refused for want of space (http-errors.ts records it). */
  fullRefusals: { last?: FullRefusal };
  /** True once the indices exist and the stored policy is loaded. */
  isInitialized: () => boolean;
  /** Resolves when initialization succeeded (it retries until then, or until the app closes). */
  initialized: Promise<void>;
}

declare module "fastify" {
  interface FastifyInstance {
    cortex: CortexContext;
  }
}
