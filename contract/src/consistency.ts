import { z } from "zod";
import { isoTimestamp } from "./common.js";

/**
 * A consistency check of everything Cortex keeps (POST /admin/check): the stores are read whole and compared with
 * each other, so rot, a half-finished write or an erasure that left something behind is found before a person
 * asks for it. Findings name ids and what is wrong, never stored content (they reach logs, status and alerts).
 */

export const consistencyFindingKinds = [
  /** An archived document's bytes are missing or no longer match its hash. */
  "archive-document-corrupt",
  /** The archive's summary index names a document the archive does not hold (recall of it would fail). */
  "archive-entry-without-document",
  /** A transcript's retrieval chunk whose archived transcript is gone. */
  "chunk-without-source",
  /** A vector whose knowledge object is gone (an erasure or a failed write left it behind). */
  "vector-without-object",
  /** A vector whose retrieval-gate fields differ from its object's, so the k-NN gate decides on stale ones. */
  "vector-gate-stale",
  /** A pending proposal drafted from knowledge that no longer exists. */
  "proposal-source-missing",
  /** A promoted proposal whose commit is not in the workspace repository's history. */
  "proposal-commit-missing",
  /** `git fsck` reports the workspace repository broken (missing or corrupt objects, a bad HEAD). */
  "repository-unsound",
] as const;
export const consistencyFindingKind = z.enum(consistencyFindingKinds);
export type ConsistencyFindingKind = z.output<typeof consistencyFindingKind>;

export const consistencyFinding = z.object({
  kind: consistencyFindingKind,
  /** The id, hash or object name the finding is about. */
  id: z.string(),
  detail: z.string(),
});
export type ConsistencyFinding = z.output<typeof consistencyFinding>;

/** At most this many findings are listed; `byKind` counts them all. */
export const maxListedFindings = 100;

export const consistencyReport = z.object({
  checkedAt: isoTimestamp,
  durationMs: z.int().min(0),
  consistent: z.boolean(),
  counts: z.object({
    knowledge: z.int().min(0),
    vectors: z.int().min(0),
    /** Objects stored without a vector (the model was down); the next dream cycle embeds them. Not a finding. */
    awaitingVector: z.int().min(0),
    chunks: z.int().min(0),
    archivedDocuments: z.int().min(0),
    proposals: z.int().min(0),
    commits: z.int().min(0),
  }),
  byKind: z.partialRecord(consistencyFindingKind, z.int().min(1)),
  findings: z.array(consistencyFinding).max(maxListedFindings),
});
export type ConsistencyReport = z.output<typeof consistencyReport>;
