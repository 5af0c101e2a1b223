import { z } from "zod";

/** Every non-2xx answer has this shape. */
export const errorResponse = z.object({
  statusCode: z.int(),
  error: z.string(),
  message: z.string(),
});
export type ErrorResponse = z.infer<typeof errorResponse>;
