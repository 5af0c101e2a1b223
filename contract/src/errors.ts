import { z } from "zod";

/** Every non-2xx answer has this shape. */
export const errorResponse = z.object({
  statusCode: z.int(),
  error: z.string(),
  message: z.string(),
});
export type ErrorResponse = z.infer<typeof errorResponse>;

/**
 * 410 from a write (ingest, reflect, archive) for a person erased after the data was observed, and from ingest for
 * knowledge a person asked to forget: refused for good, so a queue flushed afterwards cannot bring the data back.
 * The hooks drop it instead of retrying.
 */
export const erasedResponse = errorResponse.describe(
  "Data of a person erased after it was observed, or knowledge a person asked to forget: refused for good (do not retry)",
);
