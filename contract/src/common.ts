import { z } from "zod";

/** Knowledge types; `principle` is only ever written by dream. */
export const knowledgeTypes = ["fact", "preference", "constraint", "decision", "principle"] as const;
export const knowledgeType = z.enum(knowledgeTypes);
export type KnowledgeType = z.infer<typeof knowledgeType>;

/** Who may see an item: its owner only, the owner's household, or everyone on the appliance. */
export const scopes = ["user", "household", "shared"] as const;
export const scope = z.enum(scopes);
export type Scope = z.infer<typeof scope>;

/**
 * Privacy levels, least to most restricted (same names as the operator's DimensionPolicy).
 * `private` is visible to its owning user only; `secret` is stored but never retrievable.
 */
export const privacyLevels = ["public", "household", "private", "secret"] as const;
export const privacyLevel = z.enum(privacyLevels);
export type PrivacyLevel = z.infer<typeof privacyLevel>;

/** An opaque identifier of a user, household, agent, session or similar. */
export const identifier = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9._:@/+-]+$/, "letters, digits and . _ : @ / + - only");

/**
 * RFC 3339 with an offset, as OpenSearch's `strict_date_optional_time` can index it: at most nine fractional
 * digits (nanoseconds) and an offset within ±18:00 (Java's range). Anything else would reach OpenSearch and fail.
 */
export const isoTimestamp = z.iso
  .datetime({ offset: true })
  .regex(
    /^.{19}(?:\.\d{1,9})?(?:Z|[+-](?:0\d|1[0-7]):[0-5]\d|[+-]18:00)$/,
    "at most 9 fractional digits and an offset within ±18:00",
  )
  .meta({ format: "date-time" });

/** Dimension names are lowercase keys (person, project, topic, ...); values are free-form short strings. */
export const dimensionName = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z][a-z0-9_]*$/, "lowercase letters, digits and _; starts with a letter");
export const dimensionValue = z.string().min(1).max(128);
export const dimensions = z
  .record(dimensionName, z.array(dimensionValue).max(32))
  .refine((value) => Object.keys(value).length <= 32, "at most 32 dimensions");
export type Dimensions = z.infer<typeof dimensions>;

/** The caller of /retrieve. The hooks take it from the gateway session, never from model or tool output. */
export const principal = z
  .object({
    userId: identifier,
    householdId: identifier.optional(),
    agentId: identifier,
  })
  .strict();
export type Principal = z.infer<typeof principal>;

/** Who owns an item: the user for `user` scope, the household for `household` scope. */
export const ownership = z
  .object({
    userId: identifier.optional(),
    householdId: identifier.optional(),
  })
  .strict();
export type Ownership = z.infer<typeof ownership>;

/**
 * Consent recorded with the item. `retrieval: false` keeps it out of every bundle; `agents` lists the agents that
 * may receive it ("*" = every agent).
 */
export const consent = z
  .object({
    retrieval: z.boolean().default(true),
    agents: z
      .array(z.union([z.literal("*"), identifier]))
      .min(1)
      .max(32)
      .default(["*"]),
  })
  .strict();
export type Consent = z.infer<typeof consent>;

/** Where an item came from; the source kind sets its provenance trust in ranking. */
export const provenanceSources = [
  "user",
  "tool",
  "reflection",
  "dream",
  "transcript",
  "artifact",
  "import",
] as const;
export const provenanceSource = z.enum(provenanceSources);
export type ProvenanceSource = z.infer<typeof provenanceSource>;

export const provenance = z
  .object({
    key: z.string().min(1).max(512).describe("Idempotency key: the same key is stored once."),
    source: provenanceSource,
    sessionId: identifier.optional(),
    agentId: identifier.optional(),
    channel: z.string().max(128).optional(),
    tool: z.string().max(128).optional(),
    sourceTurnIds: z.array(z.string().min(1).max(128)).max(64).default([]),
    observedAt: isoTimestamp,
    ingestedAt: isoTimestamp,
  })
  .strict();
export type Provenance = z.infer<typeof provenance>;

/** Scope and owner must agree: a user item names its user, a household item its household. */
export function scopeOwnerProblem(itemScope: Scope, owner: Ownership): string | undefined {
  if (itemScope === "user" && owner.userId === undefined) return "scope 'user' needs owner.userId";
  if (itemScope === "household" && owner.householdId === undefined) {
    return "scope 'household' needs owner.householdId";
  }
  return undefined;
}
