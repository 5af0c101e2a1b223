/** Request and response schemas of the Cortex API, for the hooks and operator clients. */
export * from "./common.js";
export * from "./dimensions.js";
export * from "./ingest.js";
export * from "./knowledge.js";
export * from "./retrieve.js";

import { z } from "zod";

/** Every non-2xx answer has this shape. */
export const errorResponse = z.object({
  statusCode: z.int(),
  error: z.string(),
  message: z.string(),
});
export type ErrorResponse = z.infer<typeof errorResponse>;
