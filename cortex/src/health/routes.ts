import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { pingStore } from "../store/client.js";
import { indicesExist } from "../store/indices.js";

export const healthRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(routes.healthz.url, { schema: routes.healthz.schema }, async () => ({
    status: "ok" as const,
  }));

  /**
   * Ready when OpenSearch answers and the indices exist. A missing embedding model is reported but does not make
   * Cortex unready: lexical-only retrieval still serves, flagged degraded.
   */
  app.get(routes.readyz.url, { schema: routes.readyz.schema }, async (_request, reply) => {
    const { cortex } = app;
    const [opensearch, indices, model] = await Promise.all([
      pingStore(cortex.store, 1_000),
      cortex.isInitialized() ? indicesExist(cortex.store, 1_000) : Promise.resolve(false),
      cortex.embedder === null ? Promise.resolve(null) : cortex.embedder.modelPresent(1_000),
    ]);
    const embeddingModel = model === null ? "not_configured" : model ? "present" : "missing";
    const ready = opensearch && indices;
    return reply.code(ready ? 200 : 503).send({ ready, checks: { opensearch, indices, embeddingModel } });
  });

  app.get("/metrics", { schema: { hide: true } }, async (_request, reply) => {
    const { registry } = app.cortex.metrics;
    return reply.header("Content-Type", registry.contentType).send(await registry.metrics());
  });
};
