import type { Verb } from "./help.js";

/** A command line that cannot be run as typed; main.ts prints it with the verb's usage and exits 2. */
export class UsageError extends Error {
  override readonly name = "UsageError";
  constructor(
    message: string,
    /** The verb whose help to show with the message; the general usage when absent. */
    readonly topic?: Verb,
  ) {
    super(message);
  }
}
