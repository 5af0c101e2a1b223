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

/**
 * How a conversation bears on an object the run was shown: asserted again (reinforce), put in doubt (weaken), or
 * said to be wrong without a replacement (contradict). Cortex applies each through its confidence rules
 * (cortex/src/core/confidence.ts): a reinforcement, the largest explicit step down, a contradiction.
 */
export const adjustmentEffects = ["reinforce", "weaken", "contradict"] as const;

export const confidenceAdjustmentSchema = z
  .object({
    targetId: id,
    effect: z.enum(adjustmentEffects).optional(),
    /** A raw nudge, bounded by Cortex (±0.2); give either this or `effect`. */
    delta: z.number().min(-1).max(1).optional(),
    reason: z.string().min(1).max(500),
    sourceTurnIds: turnIds,
  })
  .strict()
  .refine((adjustment) => (adjustment.effect === undefined) !== (adjustment.delta === undefined), {
    message: "give exactly one of effect and delta",
  });

export const candidateDimensionSchema = z
  .object({
    name: dimensionNameSchema,
    value: z.string().trim().min(1).max(128),
    sourceTurnIds: turnIds,
  })
  .strict();

/**
 * Relations a reflection may assert between objects. Stored as the knowledge model's links, both directions:
 * supports → evidenceFor/evidence, contradicts → conflicts, refines → refines/refinedBy, related → related.
 */
export const reflectedLinkRelations = ["supports", "contradicts", "refines", "related"] as const;

/** One end of a link: a stored object by id, an item of this delta, or the replacement of one of its corrections. */
export const linkEndSchema = z.union([
  z.object({ id }).strict(),
  z.object({ item: z.int().min(0).max(99).describe("Index into this delta's items.") }).strict(),
  z.object({ replacement: z.int().min(0).max(49).describe("Index into this delta's corrections.") }).strict(),
]);

export const deltaLinkSchema = z
  .object({
    from: linkEndSchema,
    relation: z.enum(reflectedLinkRelations),
    to: linkEndSchema,
    sourceTurnIds: turnIds,
  })
  .strict();

const reflectionDeltaFields = z
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
    links: z.array(deltaLinkSchema).max(100).default([]),
  })
  .strict();

type LinkEnd = z.output<typeof linkEndSchema>;

/** A link end that points inside the delta must point at something there (a 400, not a silent drop). */
function linkEndProblem(end: LinkEnd, delta: z.output<typeof reflectionDeltaFields>): string | undefined {
  if ("item" in end && end.item >= delta.items.length) return `no items.${end.item} in this delta`;
  if ("replacement" in end && delta.corrections[end.replacement]?.replacement === undefined)
    return `corrections.${end.replacement} has no replacement in this delta`;
  return undefined;
}

export const reflectionDeltaSchema = reflectionDeltaFields.superRefine((delta, context) => {
  delta.links.forEach((link, index) => {
    for (const side of ["from", "to"] as const) {
      const problem = linkEndProblem(link[side], delta);
      if (problem !== undefined)
        context.addIssue({ code: "custom", path: ["links", index, side], message: problem });
    }
  });
});

export type DeltaItem = z.output<typeof deltaItemSchema>;
export type Correction = z.output<typeof correctionSchema>;
export type ConfidenceAdjustment = z.output<typeof confidenceAdjustmentSchema>;
export type CandidateDimensionObservation = z.output<typeof candidateDimensionSchema>;
export type AdjustmentEffect = (typeof adjustmentEffects)[number];
export type ReflectedLinkRelation = (typeof reflectedLinkRelations)[number];
export type DeltaLinkEnd = LinkEnd;
export type DeltaLink = z.output<typeof deltaLinkSchema>;
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
  linksDropped: z
    .int()
    .describe("Links of the delta not stored: both ends are one object, or they are in different scopes."),
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
