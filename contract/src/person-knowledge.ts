import { z } from "zod";
import { isoTimestamp } from "./common.js";
import { knowledgeObject, lifecycleStatuses } from "./knowledge.js";

/**
 * "My memory" in remram-app: a person sees, searches, corrects and forgets what the assistant remembers about them.
 * What a person sees is their own user-scope knowledge and the household-scope knowledge of the appliance's
 * household (CORTEX_HOUSEHOLD_ID), never another person's user-scope items and never shared items (promoted or
 * dreamed for everyone, not about anyone). The app acts for `requestedBy`: on its own data only, or on another
 * person's with `asAdmin` where the route allows it (the app asserts it checked in Kubernetes that the requester
 * is an administrator). The admin caller may always.
 */

/** The scopes a person's listing covers. */
export const personKnowledgeScopes = ["user", "household"] as const;

/** Who the request is for and who asked (both as the app knows them). */
const subject = {
  userId: z.string().min(1).max(128).describe("Whose knowledge."),
  requestedBy: z.string().min(1).max(256).describe("Who asked: the person signed in to the app."),
};

export const personKnowledgeRequest = z
  .object({
    ...subject,
    asAdmin: z
      .boolean()
      .default(false)
      .describe(
        "The app may list another person's knowledge only with this (it checked the requester is an admin).",
      ),
    query: z
      .string()
      .min(1)
      .max(512)
      .optional()
      .describe("Words to find in statements (BM25), best match first."),
    status: z
      .array(z.enum(lifecycleStatuses))
      .min(1)
      .max(lifecycleStatuses.length)
      .default([...lifecycleStatuses]),
    scopes: z
      .array(z.enum(personKnowledgeScopes))
      .min(1)
      .max(personKnowledgeScopes.length)
      .default([...personKnowledgeScopes]),
    limit: z.int().min(1).max(200).default(50),
    cursor: z
      .string()
      .min(1)
      .max(1024)
      .optional()
      .describe("The previous page's nextCursor, with the same filters."),
  })
  .strict();
export type PersonKnowledgeRequest = z.output<typeof personKnowledgeRequest>;
export type PersonKnowledgeRequestInput = z.input<typeof personKnowledgeRequest>;

/** An object that contradicts or replaced one listed: its statement only when the person may see it. */
export const contradictingObject = z.object({
  id: z.string(),
  statement: z.string().optional(),
});
export type ContradictingObject = z.output<typeof contradictingObject>;

export const personKnowledgeItem = z.object({
  object: knowledgeObject,
  mine: z.boolean().describe("A user-scope object of the person's own (else the household's)."),
  contradictedBy: z
    .array(contradictingObject)
    .describe("Objects it is linked to as `conflicts` or `supersededBy` (the correction that replaced it)."),
});
export type PersonKnowledgeItem = z.output<typeof personKnowledgeItem>;

export const personKnowledgeResponse = z.object({
  items: z.array(personKnowledgeItem),
  nextCursor: z.string().nullable().describe("null on the last page."),
  total: z.int().min(0).describe("How many objects match the filters in all."),
});
export type PersonKnowledgeResponse = z.output<typeof personKnowledgeResponse>;

export const personKnowledgeCorrectRequest = z
  .object({
    ...subject,
    id: z.string().min(1).max(128).describe("The active object to correct."),
    statement: z.string().min(1).max(4000).describe("What is true instead."),
    reason: z.string().max(1024).optional(),
  })
  .strict();
export type PersonKnowledgeCorrectRequest = z.output<typeof personKnowledgeCorrectRequest>;

export const personKnowledgeCorrectResponse = z.object({
  invalidated: z.string().describe("The corrected object's id: invalidated, kept for the history."),
  created: knowledgeObject.describe("The new active object holding the corrected statement."),
});
export type PersonKnowledgeCorrectResponse = z.output<typeof personKnowledgeCorrectResponse>;

export const personKnowledgeForgetRequest = z
  .object({
    ...subject,
    asAdmin: z
      .boolean()
      .default(false)
      .describe(
        "Lets the app forget household knowledge, or another person's (it checked the requester is an admin).",
      ),
    ids: z.array(z.string().min(1).max(128)).min(1).max(100),
    reason: z.string().min(1).max(1024),
  })
  .strict();
export type PersonKnowledgeForgetRequest = z.output<typeof personKnowledgeForgetRequest>;

/** What one forget removed or rewrote, per store; never content. */
export const forgetCounts = z.object({
  knowledgeDeleted: z.int(),
  vectorsDeleted: z.int(),
  linksRemoved: z.int().describe("Links from other objects to the forgotten ones."),
  dimensionValuesRemoved: z.int().describe("Candidate-dimension sample values no remaining item carries."),
  proposalsDeleted: z.int(),
  reviewsDeleted: z.int(),
  recordsRewritten: z.int(),
  gitBlobsRewritten: z.int(),
  gitCommitsRewritten: z.int(),
  gitCommitsDropped: z.int(),
  workspaceFilesChanged: z.int(),
  artifactChunksChanged: z.int(),
});
export type ForgetCounts = z.output<typeof forgetCounts>;

export const personKnowledgeForgetResponse = z.object({
  auditId: z.string(),
  forgottenAt: isoTimestamp,
  forgotten: z.int().min(0).describe("Objects removed now."),
  alreadyForgotten: z.int().min(0).describe("Ids an earlier forget removed (a retry)."),
  counts: forgetCounts,
  durationMs: z.int().min(0),
});
export type PersonKnowledgeForgetResponse = z.output<typeof personKnowledgeForgetResponse>;
