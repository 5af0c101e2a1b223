import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { retrieve } from "./service.js";

export const retrieveRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(routes.retrieve.url, routeOptions(routes.retrieve), async (request) => {
    const { cortex } = app;
    const response = await retrieve(
      {
        store: cortex.store,
        embedder: cortex.embedder,
        policy: () => cortex.policy.get(),
        settings: cortex.retrieval,
        usage: cortex.usage,
        metrics: cortex.metrics,
      },
      request.body,
      cortex.clock(),
    );
    // A Cortex deliberately run without an embedding model is lexical by design; only failures are worth a warning.
    const failures = cortex.embedder === null ? response.degradedReasons.slice(1) : response.degradedReasons;
    if (failures.length > 0) request.log.warn({ reasons: failures }, "degraded retrieval");
    return response;
  });
};
