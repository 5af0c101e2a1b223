/** How a knowledge object's lifecycle moves: rules both reflection (a correction) and dream (a contradiction) apply. */
import { applyConfidenceEvent, type ConfidenceConstants, defaultConfidenceConstants } from "./confidence.js";
import type { MaturingObject } from "./knowledge.js";

/** A correction ends validity and lowers confidence; the object stays stored and auditable. */
export function invalidate(
  object: MaturingObject,
  at: string,
  constants: ConfidenceConstants = defaultConfidenceConstants,
): MaturingObject {
  if (object.state === "invalidated") return object;
  return {
    ...object,
    state: "invalidated",
    invalidAt: at,
    confidence: applyConfidenceEvent(object.confidence, { kind: "contradiction" }, constants),
    updatedAt: at,
  };
}
