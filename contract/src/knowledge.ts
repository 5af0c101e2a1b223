import { z } from "zod";
import {
  consent,
  dimensions,
  isoTimestamp,
  knowledgeType,
  ownership,
  privacyLevel,
  provenance,
  scope,
  scopeOwnerProblem,
} from "./common.js";

/** Optional subject–predicate–object form of a statement; dream compares claims to find contradictions. */
export const claim = z
  .object({
    subject: z.string().min(1).max(256),
    predicate: z.string().min(1).max(128),
    object: z.string().min(1).max(1024),
  })
  .strict();
export type Claim = z.infer<typeof claim>;

export const link = z
  .object({
    /** Same relation names as reflection and dream use (cortex/src/core/knowledge.ts). */
    rel: z.enum([
      "related",
      "conflicts",
      "supersedes",
      "supersededBy",
      "evidence",
      "evidenceFor",
      "refines",
      "refinedBy",
    ]),
    targetId: z.string().min(1).max(128),
  })
  .strict();
export type Link = z.infer<typeof link>;

export const promotionStates = ["none", "candidate", "proposed", "promoted"] as const;
/** Only `active` objects are retrievable; demoted and invalidated ones stay auditable (seed 000 §5.9). */
export const lifecycleStatuses = ["active", "demoted", "invalidated"] as const;

export const validity = z
  .object({
    validFrom: isoTimestamp,
    /** Set when contradicted or expired; knowledge is invalidated, never silently deleted. */
    invalidAt: isoTimestamp.nullable().default(null),
  })
  .strict();

/** A durable knowledge object as stored in the knowledge index (the embedding travels separately). */
export const knowledgeObject = z
  .object({
    id: z.string().min(1).max(128),
    statement: z.string().min(1).max(4000),
    type: knowledgeType,
    claim: claim.optional(),
    provenance,
    scope,
    owner: ownership,
    privacy: privacyLevel,
    consent,
    dimensions,
    confidence: z.number().min(0).max(1),
    reinforcementCount: z.int().min(0).default(0),
    /** Tool results that confirmed it (live evidence outranks derived memory). */
    toolConfirmations: z.int().min(0).default(0),
    /** Distinct sessions that asserted it, sorted. */
    sessionIds: z.array(z.string().min(1).max(128)).max(256).default([]),
    lastReinforcedAt: isoTimestamp,
    lastDecayedAt: isoTimestamp.nullable().default(null),
    /** A user explicitly asked to keep this: a promotion criterion. */
    userDirective: z.boolean().default(false),
    usageCount: z.int().min(0).default(0),
    lastUsedAt: isoTimestamp.nullable().default(null),
    validity,
    links: z.array(link).max(64).default([]),
    promotionState: z.enum(promotionStates).default("none"),
    status: z.enum(lifecycleStatuses).default("active"),
    createdAt: isoTimestamp,
    updatedAt: isoTimestamp,
  })
  .strict()
  .superRefine((value, context) => {
    const problem = scopeOwnerProblem(value.scope, value.owner);
    if (problem !== undefined) context.addIssue({ code: "custom", path: ["owner"], message: problem });
  });
export type KnowledgeObject = z.infer<typeof knowledgeObject>;

/**
 * Chunk levels: L0 is a summary of a whole source (broad context), L1 a section, L2 raw text (grounding).
 */
export const chunkLevels = ["L0", "L1", "L2"] as const;
export const chunkLevel = z.enum(chunkLevels);
export type ChunkLevel = z.infer<typeof chunkLevel>;

export const chunkSourceKinds = ["transcript", "tool_result", "turn", "artifact"] as const;

export const chunk = z
  .object({
    id: z.string().min(1).max(128),
    sourceId: z
      .string()
      .min(1)
      .max(256)
      .describe("The transcript, artifact or tool call the chunk belongs to."),
    sourceKind: z.enum(chunkSourceKinds),
    title: z.string().max(512).optional(),
    /** Workspace-relative path of an artifact, for artifactRefs. */
    path: z.string().max(1024).optional(),
    level: chunkLevel,
    seq: z.int().min(0),
    text: z.string().min(1).max(16000),
    parentId: z.string().max(128).nullable(),
    prevId: z.string().max(128).nullable(),
    nextId: z.string().max(128).nullable(),
    provenance,
    scope,
    owner: ownership,
    privacy: privacyLevel,
    consent,
    dimensions,
    confidence: z.number().min(0).max(1),
    usageCount: z.int().min(0).default(0),
    lastUsedAt: isoTimestamp.nullable().default(null),
    validity,
    createdAt: isoTimestamp,
  })
  .strict();
export type Chunk = z.infer<typeof chunk>;
