import { z } from "zod";

const digest = z.string().regex(/^sha256:[a-f0-9]{64}$/);
/**
 * A Kubernetes user name as the API server reports it (`kubernetes-admin`, `alice@example.com`,
 * `system:serviceaccount:remram:operator`, `oidc:https://issuer#sub`): one token of printable characters, no
 * spaces or control characters. It goes into a commit message, so a line break must never get through.
 */
export const approverName = z
  .string()
  .min(1)
  .max(256)
  .regex(
    /^[A-Za-z0-9][A-Za-z0-9._@:#+=/~-]*$/,
    "a user name: letters, digits and . _ @ : # + = / ~ -, starting with a letter or digit",
  );

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
    approvedBy: approverName,
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
  .object({ deniedBy: approverName, reason: z.string().max(1024).optional() })
  .strict();
export type DenyRequestInput = z.input<typeof denyRequest>;
