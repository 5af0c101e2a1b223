import { z } from "zod";
import { isoTimestamp, principal, scopes } from "./common.js";
import { errorResponse } from "./errors.js";

/** The reflection delta: what a reflection run extracted from one finished interaction (seed 000 §4.6, §5.6). */

const id = z.string().min(1).max(128);
const turnIds = z.array(z.string().min(1).max(128)).min(1).max(64);
const statement = z.string().trim().min(1).max(2000);

export const claimSchema = z
  .object({
    subject: z.string().trim().min(1).max(200),
    predicate: z.string().trim().min(1).max(200),
    object: z.string().trim().min(1).max(500),
  })
  .strict();

export const scopeSchema = z
  .object({
    kind: z.enum(scopes),
    /** The user for "user", the household for "household"; empty (appliance-wide) or a group for "shared". */
    ownerIds: z.array(id).max(32),
  })
  .strict();

export const dimensionNameSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z][a-z0-9_]*$/, "dimension names are lower-case letters, digits and _");

/** Reflection never writes principles: only dream consolidates them. */
export const reflectedTypes = ["fact", "preference", "constraint", "decision"] as const;

export const deltaItemSchema = z
  .object({
    type: z.enum(reflectedTypes),
    statement,
    claim: claimSchema.optional(),
    scope: scopeSchema,
    dimensions: z.record(dimensionNameSchema, z.array(z.string().min(1).max(128)).max(16)).optional(),
    sourceTurnIds: turnIds,
    /** The reflection model's own confidence; the model bounds how far it may move the initial value. */
    confidence: z.number().min(0).max(1).optional(),
    /** A tool result in this interaction confirmed it. */
    toolConfirmed: z.boolean().optional(),
    /** The user asked for it to be kept ("remember this"). */
    userDirective: z.boolean().optional(),
    /** Privacy of the new object; the dimension policy's default level when absent. */
    privacy: z.enum(["public", "household", "private", "secret"]).optional(),
  })
  .strict();

export const correctionSchema = z
  .object({
    /** The object the user corrected, when the reflection run knows it (e.g. it was in the injected bundle). */
    targetId: id.optional(),
    /** Otherwise the claim the user rejected; object may be left out ("forget where I work"). */
    claim: claimSchema.partial({ object: true }).optional(),
    /** What the user said was wrong, used for semantic matching when there is no id or claim. */
    statement,
    scope: scopeSchema,
    sourceTurnIds: turnIds,
    /** The corrected knowledge, if the user gave it ("no, I moved to Oslo"). */
    replacement: deltaItemSchema.optional(),
  })
  .strict();

export const confidenceAdjustmentSchema = z
  .object({
    targetId: id,
    delta: z.number().min(-1).max(1),
    reason: z.string().min(1).max(500),
    sourceTurnIds: turnIds,
  })
  .strict();

export const candidateDimensionSchema = z
  .object({
    name: dimensionNameSchema,
    value: z.string().trim().min(1).max(128),
    sourceTurnIds: turnIds,
  })
  .strict();

export const reflectionDeltaSchema = z
  .object({
    sessionId: id,
    /**
     * When the reflected interaction happened. A delta observed at or before its person's erasure is refused (410),
     * so a queue flushed after the erasure cannot bring the data back; absent, it counts as observed on arrival.
     */
    observedAt: isoTimestamp.optional(),
    items: z.array(deltaItemSchema).max(100).default([]),
    corrections: z.array(correctionSchema).max(50).default([]),
    confidenceAdjustments: z.array(confidenceAdjustmentSchema).max(100).default([]),
    candidateDimensions: z.array(candidateDimensionSchema).max(100).default([]),
  })
  .strict();

export type DeltaItem = z.output<typeof deltaItemSchema>;
export type Correction = z.output<typeof correctionSchema>;
export type ConfidenceAdjustment = z.output<typeof confidenceAdjustmentSchema>;
export type CandidateDimensionObservation = z.output<typeof candidateDimensionSchema>;
export type ReflectionDelta = z.output<typeof reflectionDeltaSchema>;

/** POST /reflect: the delta with the principal it was reflected for beside its fields. */
export const reflectRequest = reflectionDeltaSchema.extend({ principal });
export type ReflectRequest = z.output<typeof reflectRequest>;
export type ReflectRequestInput = z.input<typeof reflectRequest>;

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
export type ReflectResponse = z.output<typeof reflectResponse>;

/** 403 from /reflect: the caller may not reflect, or (with `violations`) the delta writes outside the principal's scope. */
export const scopeViolationResponse = errorResponse.extend({
  violations: z.array(z.object({ path: z.string(), reason: z.string() })).optional(),
});
