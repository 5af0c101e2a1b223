import { z } from "zod";
import { identifier, isoTimestamp, principal, privacyLevels } from "./common.js";

/**
 * Archive memory documents (seed 004): a compacted transcript range, after redaction, kept immutably and
 * addressed by the SHA-256 of its canonical JSON bytes. Cortex's archive feature hashes, places and recalls them.
 */

const message = z
  .object({
    role: z.enum(["user", "assistant", "system", "tool"]),
    content: z.string().max(200_000),
    turnId: z.string().min(1).max(128).optional(),
    at: isoTimestamp.optional(),
    /**
     * The person who wrote a user turn, in a document several people own: erasing one of them removes their turns
     * (and the answers to them); a user turn naming nobody goes with any owner's erasure.
     */
    authorId: identifier.optional(),
  })
  .strict();

const attachment = z
  .object({
    name: z.string().min(1).max(256),
    mediaType: z.string().min(1).max(128),
    /** Content digest of the attachment; the archive stores references, not blobs. */
    digest: z.string().regex(/^sha256:[a-f0-9]{64}$/),
  })
  .strict();

/** Everything that is hashed. created_at is the range's own time, so the same content always hashes the same. */
export const memoryDocumentSchema = z
  .object({
    createdAt: isoTimestamp,
    source: z
      .object({
        sessionId: z.string().min(1).max(256),
        channel: z.string().min(1).max(64),
        agentId: z.string().min(1).max(128).optional(),
      })
      .strict(),
    messages: z.array(message).min(1).max(5000),
    attachments: z.array(attachment).max(100).default([]),
    tags: z.array(z.string().min(1).max(64)).max(64).default([]),
    consentScope: z
      .object({
        /** Who may read the full document back; the principal must be one of them. */
        ownerIds: z.array(z.string().min(1).max(128)).min(1).max(32),
        privacy: z.enum(privacyLevels),
        /** Whether the full document may be recalled at all, or only its summary. */
        allowRecall: z.boolean(),
      })
      .strict(),
  })
  .strict();
export type MemoryDocument = z.output<typeof memoryDocumentSchema>;

export const archiveRequest = z
  .object({
    document: memoryDocumentSchema,
    summary: z.string().trim().min(1).max(4000),
    /** Where the summariser placed it; y defaults from privacy, z to 0. */
    placement: z.object({ y: z.number().optional(), z: z.number().optional() }).strict().optional(),
    clusterId: z.string().min(1).max(128).optional(),
  })
  .strict();
export type ArchiveRequest = z.output<typeof archiveRequest>;

const coordinates = z.object({ x: z.int(), y: z.int(), z: z.int() });

export const archiveResponse = z.object({ hash: z.string(), stored: z.boolean(), coordinates });

export const archiveSummaryHit = z.object({
  hash: z.string(),
  summary: z.string(),
  coordinates,
  clusterId: z.string().nullable(),
  decayScore: z.number(),
  reinforcementCount: z.int(),
  consent: z.object({ privacy: z.string(), allowRecall: z.boolean() }),
  sourceSession: z.string(),
  sourceChannel: z.string(),
  createdAt: z.string(),
});

const range = z
  .object({ min: z.int().min(-100_000).max(100_000), max: z.int().min(-100_000).max(100_000) })
  .strict();

export const archiveSearchRequest = z
  .object({
    principal,
    query: z.string().max(1000).optional(),
    x: range.optional().describe("Day offsets from today, e.g. {min: -7, max: 0} for the last week."),
    y: range.optional(),
    z: range.optional(),
    limit: z.int().min(1).max(100).default(10),
  })
  .strict();
export type ArchiveSearchRequest = z.output<typeof archiveSearchRequest>;
export type ArchiveSearchRequestInput = z.input<typeof archiveSearchRequest>;

export const archiveSearchResponse = z.object({ results: z.array(archiveSummaryHit) });

export const archiveHashParams = z.object({
  hash: z.string().regex(/^[a-f0-9]{64}$/, "a SHA-256 hex digest"),
});

export const archiveRecallResponse = z.object({ hash: z.string(), document: memoryDocumentSchema });

export const archiveVerifyResponse = z.object({
  checked: z.int(),
  corrupt: z.array(z.object({ hash: z.string(), location: z.string(), problem: z.string().optional() })),
});

/**
 * Why OpenClaw ended a session (its `session_end` reasons). A deleted session is never archived, so `deleted` is not
 * among them: Cortex refuses it.
 */
export const transcriptEndReasons = [
  "new",
  "reset",
  "idle",
  "daily",
  "compaction",
  "shutdown",
  "restart",
  "unknown",
] as const;

/**
 * A finished session's transcript, as the hooks send it on session_end: Cortex builds the memory document (owned by
 * the principal, who wrote its user turns), archives it under its hash and chunks it (L0 summary, L1 sections, L2
 * passages) into retrieval, each chunk citing the hash. A long session comes in parts, each a document of its own.
 */
export const transcriptArchiveRequest = z
  .object({
    principal,
    sessionId: z.string().min(1).max(256),
    channel: z.string().min(1).max(64).default("unknown"),
    endReason: z.enum(transcriptEndReasons),
    /** When the session ended; the document's time when its messages carry none. */
    endedAt: isoTimestamp,
    part: z
      .object({ index: z.int().min(0).max(999), count: z.int().min(1).max(1000) })
      .strict()
      .refine((part) => part.index < part.count, "part.index must be below part.count")
      .default({ index: 0, count: 1 }),
    messages: z.array(message).min(1).max(5000),
    attachments: z.array(attachment).max(100).default([]),
    privacy: z.enum(privacyLevels).default("private"),
    /** Whether the full document may be recalled (memory_get); without it only the summary is searchable. */
    allowRecall: z.boolean().default(true),
  })
  .strict();
export type TranscriptArchiveRequest = z.output<typeof transcriptArchiveRequest>;
export type TranscriptArchiveRequestInput = z.input<typeof transcriptArchiveRequest>;

export const transcriptArchiveResponse = z.object({
  hash: z.string(),
  stored: z.boolean().describe("false when the same document was archived before (a resend)."),
  coordinates,
  summary: z.string(),
  chunks: z.object({
    ids: z.array(z.string()),
    created: z.int().min(0),
    duplicates: z.int().min(0),
  }),
  embedded: z
    .boolean()
    .describe("false when the embedding model was unreachable: chunks stored lexical-only."),
});
export type TranscriptArchiveResponse = z.output<typeof transcriptArchiveResponse>;

export const archiveTieringResponse = z.object({
  checked: z.int().min(0),
  movedToWarm: z.int().min(0),
  movedToCold: z.int().min(0),
  coldBundles: z.int().min(0).describe("Bundles written by this pass."),
  durationMs: z.int().min(0),
});

const sha256Hex = /^[a-f0-9]{64}$/;

/**
 * The archive hash a chunk cites: a transcript's chunks name their archived document's hash as sourceId (so an
 * erasure that rewrites the document re-points them); null for any other chunk.
 */
export function documentHashOf(chunk: { sourceKind: string; sourceId: string }): string | null {
  return chunk.sourceKind === "transcript" && sha256Hex.test(chunk.sourceId) ? chunk.sourceId : null;
}

export const erasureRequest = z
  .object({
    userId: z.string().min(1).max(128),
    requestedBy: z.string().min(1).max(256),
    reason: z.string().min(1).max(1024),
  })
  .strict();
export type ErasureRequest = z.output<typeof erasureRequest>;

/** What one erasure removed or rewrote, per store; never content. */
export const erasureCounts = z.object({
  knowledgeDeleted: z.int(),
  vectorsDeleted: z.int(),
  chunksDeleted: z.int(),
  linksRemoved: z.int().describe("Links from other people's objects to erased ones."),
  referencesRepointed: z.int().describe("Items that named a rewritten archive document's old hash."),
  dimensionValuesRemoved: z.int(),
  archiveErased: z
    .int()
    .describe("Documents deleted: the person's own, and shared ones with nothing else left."),
  archiveRewritten: z.int().describe("Shared documents rewritten without the person and re-hashed."),
  proposalsDeleted: z.int(),
  reviewsDeleted: z.int(),
  recordsRewritten: z.int().describe("Dream reports and dimension promotions that named erased items."),
  receiptsTombstoned: z.int().describe("Reflection receipts emptied; a replay of their delta is refused."),
  gitBlobsRewritten: z.int(),
  gitCommitsRewritten: z.int(),
  gitCommitsDropped: z.int().describe("Commits left empty by the rewrite."),
  workspaceFilesChanged: z.int(),
  artifactChunksChanged: z.int(),
});
export type ErasureCounts = z.output<typeof erasureCounts>;

export const erasureResponse = z.object({
  auditId: z.string(),
  /** Writes for the person observed at or before this are refused from now on (410). */
  erasedAt: z.iso.datetime({ offset: true }),
  /** Three of the counts again at the top level, where earlier clients read them. */
  knowledgeDeleted: z.int(),
  chunksDeleted: z.int(),
  archiveErased: z.int(),
  counts: erasureCounts,
  durationMs: z.int(),
});
