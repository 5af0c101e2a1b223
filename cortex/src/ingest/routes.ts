import { ingestLimits, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { payloadTooLarge } from "../http-errors.js";
import { ingest } from "./service.js";

export const ingestRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(routes.ingest.url, routeOptions(routes.ingest), async (request) => {
    const { cortex } = app;
    if (request.body.events.length > ingestLimits.maxEvents) {
      throw payloadTooLarge(
        `events: ${request.body.events.length} in one batch, at most ${ingestLimits.maxEvents}`,
      );
    }
    return ingest(
      {
        store: cortex.store,
        embedder: cortex.embedder,
        policy: () => cortex.policy.get(),
        metrics: cortex.metrics,
        onBackgroundError: (error) => request.log.warn({ err: error }, "ingest side work failed"),
      },
      request.body,
      cortex.clock(),
    );
  });
};
