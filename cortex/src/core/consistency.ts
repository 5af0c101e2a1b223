/**
 * The consistency rules: given what each store holds (read whole by check/service.ts), which of them disagree.
 * Pure, so each rule is tested on plain data; the service confirms a finding against the live stores before it
 * reports it, because a write landing between two reads looks like an inconsistency for a moment.
 */
import {
  type ConsistencyFinding,
  type ConsistencyFindingKind,
  type ConsistencyReport,
  maxListedFindings,
} from "@remram/contract";
import { canonicalJson } from "./canonical-json.js";

/** The fields the k-NN gate filters on, as computed from an object or as stored beside its vector. */
export type GateFields = Readonly<Record<string, unknown>>;

export interface StoresSnapshot {
  /** Knowledge object id → the gate fields its vector should carry. */
  knowledge: ReadonlyMap<string, GateFields>;
  /** Vector document id → the gate fields stored with it. */
  vectors: ReadonlyMap<string, GateFields>;
  /** Retrieval chunks cut from archived transcripts, with the transcript's hash. */
  transcriptChunks: readonly { id: string; sourceId: string }[];
  chunkCount: number;
  /** Hashes the archive holds. */
  archived: ReadonlySet<string>;
  /** Archived documents whose bytes are missing or no longer hash to their name. */
  corruptDocuments: readonly { hash: string; problem: string }[];
  /** Hashes the archive's summary index has an entry for. */
  archiveEntries: readonly string[];
  proposals: readonly { id: string; state: string; sourceKnowledgeIds: readonly string[] }[];
  /** Proposal ids a commit in the workspace repository's history names. */
  promotedInHistory: ReadonlySet<string>;
  commits: number;
  /** What `git fsck` reported, one line each. */
  repositoryProblems: readonly { id: string; detail: string }[];
}

/** The gate fields that differ between an object and its vector (names only: values may be a person's data). */
export function differingGateFields(expected: GateFields, stored: GateFields): string[] {
  return Object.keys(expected)
    .filter((key) => canonicalJson(expected[key] ?? null) !== canonicalJson(stored[key] ?? null))
    .sort();
}

export function findInconsistencies(stores: StoresSnapshot): ConsistencyFinding[] {
  const findings: ConsistencyFinding[] = [];
  const add = (kind: ConsistencyFindingKind, id: string, detail: string) =>
    findings.push({ kind, id, detail });

  for (const { hash, problem } of stores.corruptDocuments) add("archive-document-corrupt", hash, problem);
  for (const hash of stores.archiveEntries) {
    if (!stores.archived.has(hash))
      add("archive-entry-without-document", hash, "the summary index names it; the archive does not hold it");
  }
  for (const chunk of stores.transcriptChunks) {
    if (!stores.archived.has(chunk.sourceId))
      add("chunk-without-source", chunk.id, `its transcript ${chunk.sourceId} is not in the archive`);
  }
  for (const [id, stored] of stores.vectors) {
    const expected = stores.knowledge.get(id);
    if (expected === undefined) {
      add("vector-without-object", id, "no knowledge object has this id");
      continue;
    }
    const differing = differingGateFields(expected, stored);
    if (differing.length > 0)
      add("vector-gate-stale", id, `the vector's gate differs from the object's in ${differing.join(", ")}`);
  }
  for (const proposal of stores.proposals) {
    if (proposal.state === "pending") {
      const missing = proposal.sourceKnowledgeIds.filter((id) => !stores.knowledge.has(id));
      if (missing.length > 0)
        add(
          "proposal-source-missing",
          proposal.id,
          `drafted from knowledge that is gone: ${missing.join(", ")}`,
        );
    }
    if (proposal.state === "promoted" && !stores.promotedInHistory.has(proposal.id))
      add("proposal-commit-missing", proposal.id, "no commit in the workspace history names this proposal");
  }
  for (const problem of stores.repositoryProblems) add("repository-unsound", problem.id, problem.detail);
  return findings;
}

export function consistencyReport(
  stores: StoresSnapshot,
  findings: readonly ConsistencyFinding[],
  checkedAt: Date,
  durationMs: number,
): ConsistencyReport {
  const byKind: Partial<Record<ConsistencyFindingKind, number>> = {};
  for (const finding of findings) byKind[finding.kind] = (byKind[finding.kind] ?? 0) + 1;
  let awaitingVector = 0;
  // An invalidated object's vector is deleted with the invalidation; it awaits none.
  for (const [id, gate] of stores.knowledge) {
    if (!stores.vectors.has(id) && gate.status !== "invalidated") awaitingVector++;
  }
  return {
    checkedAt: checkedAt.toISOString(),
    durationMs: Math.max(0, Math.round(durationMs)),
    consistent: findings.length === 0,
    counts: {
      knowledge: stores.knowledge.size,
      vectors: stores.vectors.size,
      awaitingVector,
      chunks: stores.chunkCount,
      archivedDocuments: stores.archived.size,
      proposals: stores.proposals.length,
      commits: stores.commits,
    },
    byKind,
    findings: findings.slice(0, maxListedFindings),
  };
}

/**
 * `git fsck` output → problems. Dangling objects are what a history rewrite leaves for gc, and notices (an empty
 * repository's unborn branch) are not damage.
 */
export function fsckProblems(output: string): { id: string; detail: string }[] {
  return output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !/^(dangling |notice: |Checking )/.test(line))
    .map((line) => ({ id: /\b[0-9a-f]{40}\b/.exec(line)?.[0] ?? "repository", detail: line.slice(0, 512) }));
}
