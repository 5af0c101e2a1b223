import { z } from "zod";

export const livenessResponse = z.object({ status: z.literal("ok") });

export const readinessResponse = z.object({
  ready: z.boolean(),
  checks: z.object({
    opensearch: z.boolean(),
    indices: z.boolean(),
    embeddingModel: z.enum(["present", "missing", "not_configured"]),
  }),
});
export type ReadinessResponse = z.output<typeof readinessResponse>;
