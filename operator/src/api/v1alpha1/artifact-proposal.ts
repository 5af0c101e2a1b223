import { z } from "zod";
import {
  ageColumn,
  applianceRef,
  conditions,
  type KindDefinition,
  listSet,
  readyColumns,
  sha256Digest,
  timestamp,
  username,
  withCel,
} from "./common.js";

/** Human decisions; only an approver (VAP-checked) sets them, and only to True, once. */
export const decisionTypes = ["Approved", "Denied"] as const;
export type Decision = (typeof decisionTypes)[number];

export const artifactProposalSpec = withCel(
  z
    .object({
      applianceRef,
      proposalId: z
        .string()
        .min(1)
        .max(128)
        .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/)
        .describe("Cortex's id of the proposal."),
      artifactPath: z
        .string()
        .min(1)
        .max(512)
        .regex(/^[A-Za-z0-9_][A-Za-z0-9._ -]*(\/[A-Za-z0-9_][A-Za-z0-9._ -]*)*\.md$/)
        .describe("Markdown file in the workspace repository, relative, no `..`."),
      baseDigest: sha256Digest
        .optional()
        .describe("Digest of the file the diff applies to; unset for a new file."),
      proposedDigest: sha256Digest.describe("Digest of the file after the change."),
      diff: z.string().max(65536).describe("Unified diff, bounded."),
      rationale: z.string().min(1).max(4096),
      sourceKnowledgeIds: listSet(z.array(z.string().min(1).max(128)).max(64)).optional(),
      proposedBy: username.describe("Who created this object; checked against the requester on create."),
    })
    .strict(),
  { rule: "self == oldSelf", message: "spec is immutable: create a new proposal instead" },
);

export const artifactProposalStatus = z
  .object({
    observedGeneration: z.int().min(0).optional(),
    phase: z.enum(["Pending", "Approved", "Denied", "Promoted", "Failed"]).optional(),
    conditions: conditions.optional(),
    approval: z
      .object({
        decision: z.enum(decisionTypes),
        by: username.describe("The approver; must equal the requesting user."),
        at: timestamp,
        comment: z.string().max(1024).optional(),
        generation: z.int().min(1).describe("metadata.generation the decision was made on."),
        proposedDigest: sha256Digest.describe("spec.proposedDigest the decision was made on."),
      })
      .strict()
      .optional(),
    promotion: z
      .object({
        commitId: z
          .string()
          .min(7)
          .max(64)
          .regex(/^[a-f0-9]+$/),
        promotedAt: timestamp,
      })
      .strict()
      .optional(),
  })
  .strict();

export type ArtifactProposalSpec = z.output<typeof artifactProposalSpec>;
export type ArtifactProposalStatus = z.output<typeof artifactProposalStatus>;

/** The reasons of an ArtifactProposal's conditions (Ready, Promoted), which users match on. */
export const ArtifactProposalReason = {
  AwaitingApproval: "AwaitingApproval",
  /** The approval names another generation or digest than the proposal has. */
  ApprovalStale: "ApprovalStale",
  /** The recorded approver is the proposer (re-checked by the operator; admission should have refused it). */
  ApproverIsProposer: "ApproverIsProposer",
  /** A SubjectAccessReview says the recorded approver lacks the approve verb on this proposal. */
  ApproverNotAuthorized: "ApproverNotAuthorized",
  /** The operator could not ask the API server about the approver yet; retried, nothing sent to Cortex. */
  ApprovalUnverified: "ApprovalUnverified",
  Promoted: "Promoted",
  Denied: "Denied",
  /** Cortex answered 409: the artifact changed since the proposal's base. */
  Conflict: "Conflict",
  Rejected: "Rejected",
  CortexUnavailable: "CortexUnavailable",
} as const;
export type ArtifactProposalReason = (typeof ArtifactProposalReason)[keyof typeof ArtifactProposalReason];

export const artifactProposalKind: KindDefinition = {
  kind: "ArtifactProposal",
  plural: "artifactproposals",
  singular: "artifactproposal",
  shortNames: ["proposal", "ap"],
  categories: ["remram"],
  description: "A change to a workspace artifact that Cortex proposes and a person approves or denies.",
  spec: artifactProposalSpec,
  status: artifactProposalStatus,
  printerColumns: [
    ...readyColumns,
    { name: "Phase", type: "string", jsonPath: ".status.phase" },
    { name: "Path", type: "string", jsonPath: ".spec.artifactPath" },
    ageColumn,
    { name: "Approver", type: "string", jsonPath: ".status.approval.by", priority: 1 },
    { name: "Commit", type: "string", jsonPath: ".status.promotion.commitId", priority: 1 },
  ],
};
