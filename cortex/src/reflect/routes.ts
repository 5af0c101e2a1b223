import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { forbidden } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { principal } from "../schemas/common.js";
import { errorResponse } from "../schemas/index.js";
import { reflectionDeltaSchema } from "./schema.js";
import { reflect } from "./service.js";

export const reflectRequest = reflectionDeltaSchema.extend({ principal });

export const reflectResponse = z.object({
  created: z.array(z.string()),
  reinforced: z.array(z.string()),
  invalidated: z.array(z.string()),
  adjusted: z.array(z.string()),
  linksAdded: z.int(),
  unmatchedCorrections: z.array(z.int()),
  candidateDimensions: z.int(),
  replayed: z
    .boolean()
    .describe("True when this exact delta was applied before and nothing was written now."),
});

export const scopeViolationResponse = errorResponse.extend({
  violations: z.array(z.object({ path: z.string(), reason: z.string() })),
});

export function reflectRoutes(indices: () => Promise<MaturationIndices>): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      "/reflect",
      {
        schema: {
          summary:
            "Apply a reflection delta: reinforce or create objects, invalidate corrected ones, link related",
          body: reflectRequest,
          response: {
            200: reflectResponse,
            400: errorResponse,
            401: errorResponse,
            403: scopeViolationResponse,
            503: errorResponse,
          },
        },
      },
      async (request) => {
        const { principal: caller, ...delta } = request.body;
        const result = await reflect(app.cortex, await indices(), caller, delta);
        if (!result.ok) {
          throw forbidden(
            `delta writes outside the principal's scope: ${result.violations.map((v) => v.path).join(", ")}`,
            { violations: result.violations },
          );
        }
        const { candidateDimensions, ...outcome } = result.outcome;
        return { ...outcome, candidateDimensions: candidateDimensions.length, replayed: result.replayed };
      },
    );
  };
}
