/**
 * Promotion: list proposals, promote one into the workspace repository (journaled git commit, the artifact
 * reindexed, its sources marked promoted, the record updated in the commit's callback) or deny it.
 */
import type { Chunk, PromoteRequest, PromoteResponse, Proposal, ProposalState } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { sha256Digest } from "../core/digest.js";
import { redactText } from "../core/redaction.js";
import { conflict, notFound, serviceUnavailable } from "../http-errors.js";
import { ErasureInProgressError, erasureGate } from "../knowledge/erasure-gate.js";
import { ownerOf } from "../knowledge/mapping.js";
import { oneAtATimePer } from "../knowledge/one-at-a-time.js";
import {
  getRecord,
  listRecords,
  type MaturationIndices,
  type ProposalRecordBody,
  putRecord,
  type StoredRecord,
} from "../knowledge/records.js";
import { loadObjects, writeObjects } from "../knowledge/repository.js";
import { request as storeRequest } from "../store/client.js";
import { chunkDocument } from "../store/documents.js";
import { createDocuments } from "../store/writes.js";
import { type GitPromoter, PromotionConflictError } from "./git-promoter.js";

function view(record: StoredRecord<ProposalRecordBody>): Proposal {
  const { body } = record;
  return {
    id: body.id,
    state: (record.state ?? "pending") as ProposalState,
    artifactPath: body.artifactPath,
    title: body.title,
    baseDigest: body.baseDigest,
    proposedDigest: body.proposedDigest,
    diff: body.diff,
    rationale: body.rationale,
    sourceKnowledgeIds: body.sourceKnowledgeIds,
    confidence: body.confidence,
    cycleId: body.cycleId,
    createdAt: record.createdAt,
    decision: body.decision,
    promotion: body.promotion,
  };
}

/** Reindex the promoted artifact as one chunk (its id follows from the path, so a new version replaces it). */
async function reindexArtifact(
  context: CortexContext,
  proposal: ProposalRecordBody,
  now: string,
): Promise<void> {
  const { store } = context;
  const id = `artifact-${sha256Digest(proposal.artifactPath).slice(7, 39)}`;
  const chunk: Chunk = {
    id,
    sourceId: proposal.artifactPath,
    sourceKind: "artifact",
    title: proposal.title,
    path: proposal.artifactPath,
    level: "L0",
    seq: 0,
    text: proposal.content.slice(0, 16_000),
    parentId: null,
    prevId: null,
    nextId: null,
    provenance: {
      key: `artifact:${proposal.artifactPath}`,
      source: "artifact",
      sourceTurnIds: [],
      observedAt: now,
      ingestedAt: now,
    },
    scope: proposal.scope.kind,
    owner: ownerOf(proposal.scope),
    privacy: proposal.privacy,
    consent: { retrieval: true, agents: ["*"] },
    dimensions: { artifact: [proposal.artifactPath.slice(0, 128)] },
    confidence: proposal.confidence,
    usageCount: 0,
    lastUsedAt: null,
    validity: { validFrom: now, invalidAt: null },
    createdAt: now,
  };
  // Without the embedding model the artifact is still promoted and found lexically; it must not block promotion.
  let embedding: number[] | null = null;
  if (context.embedder !== null) {
    embedding = await context.embedder.embedMany([chunk.text]).then(
      (vectors) => vectors[0] ?? null,
      () => null,
    );
  }
  await storeRequest(store, "DELETE", `/${store.indices.chunks}/_doc/${id}?refresh=wait_for`, undefined, {
    ignore: [404],
  });
  await createDocuments(store, [
    {
      index: store.indices.chunks,
      id,
      document: chunkDocument(chunk, embedding, context.embedder?.model ?? null),
    },
  ]);
}

export function listProposals(
  context: CortexContext,
  indices: MaturationIndices,
  state: ProposalState | undefined,
): Promise<Proposal[]> {
  return listRecords<ProposalRecordBody>(context.store, indices, "proposal", { state }).then((records) =>
    records.map(view),
  );
}

/**
 * Promotion and denial of one proposal run one at a time, each reading the state the other left, so an acknowledged
 * denial is never overwritten by a promotion racing it (the fuzzer found that race).
 */
const oneDecisionAtATime = oneAtATimePer();

/**
 * A decision is a shared section of the erasure gate: refused (503, retried by the operator) while an erasure runs,
 * and an erasure waits for one in flight, so a promotion that read a proposal before the erasure deleted it cannot
 * commit the erased statements after the history rewrite.
 */
async function outsideErasure<T>(context: CortexContext, what: string, decide: () => Promise<T>): Promise<T> {
  try {
    return await erasureGate(context.store).shared(what, decide);
  } catch (error) {
    if (error instanceof ErasureInProgressError) throw serviceUnavailable(error.message);
    throw error;
  }
}

/**
 * Commit an approved proposal once: only a pending one is promoted. A second call for a promoted one answers its
 * commit and commits nothing (the operator retries after a lost answer); a denied or superseded one is a 409.
 */
export async function promoteProposal(
  context: CortexContext,
  indices: MaturationIndices,
  git: () => Promise<GitPromoter>,
  approval: PromoteRequest,
): Promise<PromoteResponse> {
  return outsideErasure(context, "promotion", () =>
    oneDecisionAtATime(approval.proposalId, () => promoteNow(context, indices, git, approval)),
  );
}

async function promoteNow(
  context: CortexContext,
  indices: MaturationIndices,
  git: () => Promise<GitPromoter>,
  approval: PromoteRequest,
): Promise<PromoteResponse> {
  const { store } = context;
  const record = await getRecord<ProposalRecordBody>(store, indices, "proposal", approval.proposalId);
  if (!record) throw notFound(`no proposal ${approval.proposalId}`);
  if (record.state === "promoted" && record.body.promotion) {
    return { commitId: record.body.promotion.commitId, alreadyPromoted: true };
  }
  if (record.state !== "pending")
    throw conflict(`proposal ${record.id} is ${record.state}: only a pending proposal can be promoted`);
  try {
    return await (await git()).promote(
      {
        proposal: record.body,
        approvedBy: approval.approvedBy,
        baseDigest: approval.baseDigest,
        expectedDigest: approval.expectedDigest,
      },
      async (commitId) => {
        const now = context.clock().toISOString();
        await reindexArtifact(context, record.body, now);
        const sources = await loadObjects(store, record.body.sourceKnowledgeIds);
        await writeObjects(
          store,
          [],
          [...sources.values()].map((previous) => ({
            object: { ...previous, promotionState: "promoted" as const, updatedAt: now },
            previous,
          })),
        );
        await putRecord(store, indices, {
          ...record,
          state: "promoted",
          artifactPath: record.body.artifactPath,
          updatedAt: now,
          body: { ...record.body, promotion: { commitId, approvedBy: approval.approvedBy, at: now } },
        });
      },
    );
  } catch (error) {
    if (error instanceof PromotionConflictError) throw conflict(error.message);
    throw error;
  }
}

/** Deny a pending proposal; its id is kept, so the same change is never proposed again. */
export async function denyProposal(
  context: CortexContext,
  indices: MaturationIndices,
  id: string,
  denial: { deniedBy: string; reason?: string | undefined },
): Promise<Proposal> {
  return outsideErasure(context, "denial", () =>
    oneDecisionAtATime(id, () => denyNow(context, indices, id, denial)),
  );
}

/** A denial's reason is free text a reviewer typed: stored (and shown) redacted, contact details replaced. */
export function deniedReason(reason: string | undefined): string | undefined {
  return reason === undefined ? undefined : redactText(reason);
}

async function denyNow(
  context: CortexContext,
  indices: MaturationIndices,
  id: string,
  denial: { deniedBy: string; reason?: string | undefined },
): Promise<Proposal> {
  const { store } = context;
  const record = await getRecord<ProposalRecordBody>(store, indices, "proposal", id);
  if (!record) throw notFound(`no proposal ${id}`);
  if (record.state === "denied") return view(record);
  if (record.state !== "pending") throw conflict(`proposal ${record.id} is ${record.state}`);
  const now = context.clock().toISOString();
  const denied: StoredRecord<ProposalRecordBody> = {
    ...record,
    state: "denied",
    updatedAt: now,
    body: {
      ...record.body,
      decision: { decision: "denied", by: denial.deniedBy, reason: deniedReason(denial.reason), at: now },
    },
  };
  await putRecord(store, indices, { ...denied, artifactPath: record.body.artifactPath });
  return view(denied);
}
