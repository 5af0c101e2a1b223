import { z } from "zod";

const digest = z.string().regex(/^sha256:[a-f0-9]{64}$/);
export const proposalStates = ["pending", "promoted", "denied", "superseded"] as const;
export type ProposalState = (typeof proposalStates)[number];

export const proposalSchema = z.object({
  id: z.string(),
  state: z.enum(proposalStates),
  artifactPath: z.string(),
  title: z.string(),
  baseDigest: z.string().optional(),
  proposedDigest: z.string(),
  diff: z.string(),
  rationale: z.string(),
  sourceKnowledgeIds: z.array(z.string()),
  confidence: z.number(),
  cycleId: z.string(),
  createdAt: z.string(),
  decision: z
    .object({ decision: z.literal("denied"), by: z.string(), reason: z.string().optional(), at: z.string() })
    .optional(),
  promotion: z.object({ commitId: z.string(), approvedBy: z.string(), at: z.string() }).optional(),
});
export type Proposal = z.output<typeof proposalSchema>;

export const proposalsQuery = z.object({ status: z.enum(proposalStates).optional() });
export const proposalsResponse = z.object({ proposals: z.array(proposalSchema) });
export type ProposalsResponse = z.output<typeof proposalsResponse>;

export const promoteRequest = z
  .object({
    proposalId: z.string().min(1).max(128),
    approvedBy: z.string().min(1).max(256),
    /** Digest of the file the approver saw the diff against (omit for a new file). */
    baseDigest: digest.optional(),
    /** Digest of the proposed file the approval was given for (the ArtifactProposal CRD records it). */
    expectedDigest: digest.optional(),
  })
  .strict();
export type PromoteRequest = z.output<typeof promoteRequest>;
export type PromoteRequestInput = z.input<typeof promoteRequest>;

export const promoteResponse = z.object({ commitId: z.string(), alreadyPromoted: z.boolean() });
export type PromoteResponse = z.output<typeof promoteResponse>;

export const proposalParams = z.object({ id: z.string().min(1).max(128) });

export const denyRequest = z
  .object({ deniedBy: z.string().min(1).max(256), reason: z.string().max(1024).optional() })
  .strict();
export type DenyRequestInput = z.input<typeof denyRequest>;
