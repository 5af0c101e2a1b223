import { type CandidateDimension, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { listRegisteredDimensions } from "../knowledge/dimension-registry.js";
import { listCandidateDimensions } from "../store/counters.js";

export const dimensionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(routes.getDimensions.url, routeOptions(routes.getDimensions), async () => {
    const { cortex } = app;
    const [candidates, promoted] = await Promise.all([
      listCandidateDimensions<CandidateDimension>(cortex.store, 100),
      listRegisteredDimensions(cortex.store),
    ]);
    // A promoted candidate is canonical now; reflection may still count it, but it is no longer a candidate.
    const registered = new Set(promoted.map((d) => d.name));
    return {
      ...cortex.policy.state(),
      candidates: candidates.filter((c) => !registered.has(c.name)),
      promoted,
    };
  });

  app.put(routes.putDimensions.url, routeOptions(routes.putDimensions), async (request) => {
    const { cortex } = app;
    return cortex.policy.replace(cortex.store, request.body, cortex.clock().toISOString());
  });
};
