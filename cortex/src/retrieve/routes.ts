import { retrieveLimits, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { badRequest } from "../http-errors.js";
import { retrieve } from "./service.js";

export const retrieveRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(routes.retrieve.url, { schema: routes.retrieve.schema }, async (request) => {
    const { cortex } = app;
    const { tokenBudget } = request.body;
    if (tokenBudget < retrieveLimits.minTokenBudget || tokenBudget > retrieveLimits.maxTokenBudget) {
      throw badRequest(
        `body.tokenBudget: ${tokenBudget} is outside ${retrieveLimits.minTokenBudget}..${retrieveLimits.maxTokenBudget}`,
      );
    }
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
