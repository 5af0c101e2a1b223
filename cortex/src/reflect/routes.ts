import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { forbidden } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { reflect } from "./service.js";

export function reflectRoutes(indices: () => Promise<MaturationIndices>): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(routes.reflect.url, routeOptions(routes.reflect), async (request) => {
      const { principal: caller, ...delta } = request.body;
      const result = await reflect(app.cortex, await indices(), caller, delta);
      if (!result.ok) {
        throw forbidden(
          `delta writes outside the principal's scope: ${result.violations.map((v) => v.path).join(", ")}`,
          { violations: result.violations },
        );
      }
      const { candidateDimensions, ...outcome } = result.outcome;
      return {
        ...outcome,
        // A receipt written before links were reflected has no count of dropped ones.
        linksDropped: outcome.linksDropped ?? 0,
        candidateDimensions: candidateDimensions.length,
        replayed: result.replayed,
      };
    });
  };
}
