/**
 * Errors only a change to the object's spec can fix (controller-runtime's reconcile.TerminalError). The controller
 * records one and forgets the key's backoff instead of retrying: the next watch event (or the resync) brings the
 * key back.
 */
import type { z } from "zod";

export class TerminalError extends Error {
  override readonly name = "TerminalError";
}

/** The object's spec as its kind's schema reads it; one the schema refuses stays refused until someone edits it. */
export function parseSpec<T>(schema: z.ZodType<T>, spec: unknown): T {
  const parsed = schema.safeParse(spec ?? {});
  if (!parsed.success) {
    throw new TerminalError(`spec does not parse: ${parsed.error.message}`, { cause: parsed.error });
  }
  return parsed.data;
}
