import { type CandidateDimension, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { listCandidateDimensions } from "../store/counters.js";

export const dimensionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(routes.getDimensions.url, routeOptions(routes.getDimensions), async () => {
    const { cortex } = app;
    const candidates = await listCandidateDimensions<CandidateDimension>(cortex.store, 100);
    return { ...cortex.policy.state(), candidates };
  });

  app.put(routes.putDimensions.url, routeOptions(routes.putDimensions), async (request) => {
    const { cortex } = app;
    return cortex.policy.replace(cortex.store, request.body, cortex.clock().toISOString());
  });
};
