/** Prometheus metrics of one Cortex instance (own registry, so tests and several apps never collide). */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface CortexMetrics {
  registry: Registry;
  httpDuration: Histogram<"route" | "method" | "status">;
  bundleTokens: Histogram;
  candidatesConsidered: Histogram;
  degradedAnswers: Counter<"reason">;
  ingestItems: Counter<"kind" | "status">;
  embeddingDuration: Histogram<"purpose">;
  knowledgeObjects: Gauge<"type" | "status">;
  volumeFullRefusals: Counter<"route">;
}

export function createMetrics(
  collectObjectCounts?: () => Promise<{ type: string; status: string; count: number }[]>,
): CortexMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "cortex_" });
  return {
    registry,
    httpDuration: new Histogram({
      name: "cortex_http_request_duration_seconds",
      help: "HTTP request latency by route",
      labelNames: ["route", "method", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    bundleTokens: new Histogram({
      name: "cortex_retrieve_bundle_tokens",
      help: "Tokens in returned bundles",
      buckets: [0, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384],
      registers: [registry],
    }),
    candidatesConsidered: new Histogram({
      name: "cortex_retrieve_candidates_considered",
      help: "Eligible candidates ranked per retrieval",
      buckets: [0, 5, 10, 25, 50, 100, 200, 400],
      registers: [registry],
    }),
    degradedAnswers: new Counter({
      name: "cortex_retrieve_degraded_total",
      help: "Retrievals answered degraded, by cause",
      labelNames: ["reason"],
      registers: [registry],
    }),
    ingestItems: new Counter({
      name: "cortex_ingest_items_total",
      help: "Ingested events by kind and outcome (created or duplicate)",
      labelNames: ["kind", "status"],
      registers: [registry],
    }),
    embeddingDuration: new Histogram({
      name: "cortex_embedding_duration_seconds",
      help: "Embedding call latency (one call per batch)",
      labelNames: ["purpose"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    volumeFullRefusals: new Counter({
      name: "cortex_volume_full_refusals_total",
      help: "Writes refused because a volume Cortex writes files to (archive, workspace) was full, by route",
      labelNames: ["route"],
      registers: [registry],
    }),
    knowledgeObjects: new Gauge({
      name: "cortex_knowledge_objects",
      help: "Knowledge objects by type and lifecycle status (counted at scrape time)",
      labelNames: ["type", "status"],
      registers: [registry],
      async collect() {
        if (collectObjectCounts === undefined) return;
        try {
          const counts = await collectObjectCounts();
          this.reset();
          for (const { type, status, count } of counts) this.set({ type, status }, count);
        } catch {
          // OpenSearch unreachable at scrape time: keep the last values rather than failing the scrape.
        }
      },
    }),
  };
}
