import { type EmbeddingStatus, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Gauge } from "prom-client";
import { routeOptions } from "../auth.js";

/**
 * GET /admin/embeddings, and what is left to embed as a gauge, so a dashboard shows a re-embedding's progress
 * and an alert can tell one that does not move.
 */
export function embeddingsRoutes(status: () => EmbeddingStatus): FastifyPluginAsyncZod {
  return async (app) => {
    new Gauge({
      name: "cortex_embedding_fill_remaining",
      help: "Items still to be embedded with the configured model after a model change, by kind (objects, chunks)",
      labelNames: ["kind"],
      registers: [app.cortex.metrics.registry],
      collect() {
        const { objects, chunks } = status();
        this.set({ kind: "objects" }, Math.max(0, objects.total - objects.done));
        this.set({ kind: "chunks" }, Math.max(0, chunks.total - chunks.done));
      },
    });
    app.get(routes.embeddingStatus.url, routeOptions(routes.embeddingStatus), async () => status());
  };
}
