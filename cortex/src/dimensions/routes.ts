import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import {
  type CandidateDimension,
  dimensionPolicy,
  dimensionsResponse,
  putDimensionsResponse,
} from "../schemas/dimensions.js";
import { errorResponse } from "../schemas/index.js";
import { listCandidateDimensions } from "../store/counters.js";

export const dimensionsRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get(
    "/dimensions",
    {
      schema: {
        summary: "The dimension policy in force and the most frequent candidate dimensions",
        response: { 200: dimensionsResponse, 401: errorResponse, 503: errorResponse },
      },
    },
    async () => {
      const { cortex } = app;
      const candidates = await listCandidateDimensions<CandidateDimension>(cortex.store, 100);
      return { ...cortex.policy.state(), candidates };
    },
  );

  app.put(
    "/dimensions",
    {
      schema: {
        summary: "Replace the dimension policy (the operator syncs DimensionPolicy here)",
        body: dimensionPolicy,
        response: { 200: putDimensionsResponse, 400: errorResponse, 401: errorResponse, 503: errorResponse },
      },
    },
    async (request) => {
      const { cortex } = app;
      return cortex.policy.replace(cortex.store, request.body, cortex.clock().toISOString());
    },
  );
};
