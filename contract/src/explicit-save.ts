import { z } from "zod";
import { identifier, isoTimestamp, principal } from "./common.js";

/**
 * Explicit saves: a person said "remember that …", "save this", "#canon" (seed 001's write rules: an explicit
 * user save is stored at once and gets a visible page; seed 000 §5.8: an explicit user directive is a promotion
 * criterion). POST /remember stores the statement at once as a user-directive knowledge object (provenance source
 * `user`, the highest trust) and proposes the artifact page that lists it, without waiting for the nightly dream.
 * Approval of the page is still a person's decision (ArtifactProposal, `kubectl remram approve`).
 */

/** What a save may be: reflection's kinds. Principles come only from dream. */
export const explicitSaveTypes = ["fact", "preference", "constraint", "decision"] as const;
export type ExplicitSaveType = (typeof explicitSaveTypes)[number];

/** Whose a save is: the principal's own, or (when the person says so) their household's. Never shared. */
export const explicitSaveScopes = ["user", "household"] as const;
export type ExplicitSaveScope = (typeof explicitSaveScopes)[number];

export const explicitSaveLimits = { maxStatementChars: 2_000 } as const;

export const explicitSaveRequest = z
  .object({
    /** From the gateway session, never from model output; it decides the owner of the stored object. */
    principal,
    statement: z.string().trim().min(1).max(explicitSaveLimits.maxStatementChars),
    type: z.enum(explicitSaveTypes).default("fact"),
    scope: z
      .enum(explicitSaveScopes)
      .default("user")
      .describe(
        "user: the principal's own; household: the principal's household (needs principal.householdId).",
      ),
    sessionId: identifier.optional(),
    /** The turn the person said it in: a retried delivery of the same turn changes nothing. */
    turnId: z.string().min(1).max(128).optional(),
    channel: z.string().max(128).optional(),
    observedAt: isoTimestamp.optional(),
    propose: z
      .boolean()
      .default(true)
      .describe("Propose the artifact page that lists the saved object now (approval is still required)."),
  })
  .strict();
export type ExplicitSaveRequest = z.output<typeof explicitSaveRequest>;
export type ExplicitSaveRequestInput = z.input<typeof explicitSaveRequest>;

const proposalId = z.string().min(1).max(128);

/** The page the save lands on: a proposal waiting for approval, already approved, denied before, or not yet. */
export const explicitSaveProposal = z.discriminatedUnion("status", [
  z.object({
    status: z.literal("pending"),
    id: proposalId,
    artifactPath: z.string(),
    title: z.string(),
    /** False when a pending proposal of the same change already existed (a retried or repeated save). */
    createdNow: z.boolean(),
  }),
  z.object({ status: z.literal("promoted"), artifactPath: z.string() }),
  z.object({
    status: z.literal("denied"),
    id: proposalId,
    artifactPath: z.string(),
  }),
  z.object({
    status: z.literal("deferred"),
    reason: z.string().describe("Why no proposal now; the next dream cycle proposes the page."),
  }),
]);
export type ExplicitSaveProposal = z.output<typeof explicitSaveProposal>;

export const explicitSaveStatuses = ["created", "reinforced", "revived", "replayed"] as const;

export const explicitSaveResponse = z.object({
  id: z.string(),
  status: z
    .enum(explicitSaveStatuses)
    .describe(
      "created: new; reinforced: the same save from another turn; revived: it had been invalidated or demoted; replayed: this turn's save again, nothing written.",
    ),
  /** As stored: redacted. */
  statement: z.string(),
  type: z.enum(explicitSaveTypes),
  scope: z.enum(explicitSaveScopes),
  confidence: z.number().min(0).max(1),
  source: z.literal("user"),
  redactions: z.int().min(0),
  embedded: z.boolean().describe("false when the embedding model was unreachable: stored lexical-only."),
  proposal: explicitSaveProposal,
});
export type ExplicitSaveResponse = z.output<typeof explicitSaveResponse>;

/**
 * The name of the ArtifactProposal object the operator mirrors a Cortex proposal into: DNS-safe, stable, unique per
 * appliance. Here, so the operator that creates it and the hooks that tell a person what to approve agree.
 */
export function artifactProposalObjectName(appliance: string, proposalId: string): string {
  const slug = proposalId
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, "-")
    .replace(/^-+|-+$/g, "");
  return `${appliance}-${slug}`.slice(0, 253).replace(/-+$/, "");
}
