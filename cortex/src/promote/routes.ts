import { type Chunk, type Proposal, type ProposalState, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { CortexContext } from "../context.js";
import { sha256Digest } from "../core/digest.js";
import { conflict, notFound } from "../http-errors.js";
import { ownerOf } from "../knowledge/mapping.js";
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

export function promoteRoutes(
  promoter: () => Promise<GitPromoter>,
  indices: () => Promise<MaturationIndices>,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(routes.proposals.url, { schema: routes.proposals.schema }, async (request) => {
      const records = await listRecords<ProposalRecordBody>(app.cortex.store, await indices(), "proposal", {
        state: request.query.status,
      });
      return { proposals: records.map(view) };
    });

    app.post(routes.promote.url, { schema: routes.promote.schema }, async (request) => {
      const { store } = app.cortex;
      const where = await indices();
      const record = await getRecord<ProposalRecordBody>(store, where, "proposal", request.body.proposalId);
      if (!record) throw notFound(`no proposal ${request.body.proposalId}`);
      if (record.state === "promoted" && record.body.promotion) {
        return { commitId: record.body.promotion.commitId, alreadyPromoted: true };
      }
      if (record.state !== "pending") throw conflict(`proposal ${record.id} is ${record.state}`);
      try {
        const git = await promoter();
        return await git.promote(
          {
            proposal: record.body,
            approvedBy: request.body.approvedBy,
            baseDigest: request.body.baseDigest,
            expectedDigest: request.body.expectedDigest,
          },
          async (commitId) => {
            const now = app.cortex.clock().toISOString();
            await reindexArtifact(app.cortex, record.body, now);
            const sources = await loadObjects(store, record.body.sourceKnowledgeIds);
            await writeObjects(
              store,
              [],
              [...sources.values()].map((previous) => ({
                object: { ...previous, promotionState: "promoted" as const, updatedAt: now },
                previous,
              })),
            );
            await putRecord(store, where, {
              ...record,
              state: "promoted",
              artifactPath: record.body.artifactPath,
              updatedAt: now,
              body: {
                ...record.body,
                promotion: { commitId, approvedBy: request.body.approvedBy, at: now },
              },
            });
          },
        );
      } catch (error) {
        if (error instanceof PromotionConflictError) throw conflict(error.message);
        throw error;
      }
    });

    app.post(routes.deny.url, { schema: routes.deny.schema }, async (request) => {
      const { store } = app.cortex;
      const where = await indices();
      const record = await getRecord<ProposalRecordBody>(store, where, "proposal", request.params.id);
      if (!record) throw notFound(`no proposal ${request.params.id}`);
      if (record.state === "denied") return view(record);
      if (record.state !== "pending") throw conflict(`proposal ${record.id} is ${record.state}`);
      const now = app.cortex.clock().toISOString();
      const denied: StoredRecord<ProposalRecordBody> = {
        ...record,
        state: "denied",
        updatedAt: now,
        body: {
          ...record.body,
          decision: { decision: "denied", by: request.body.deniedBy, reason: request.body.reason, at: now },
        },
      };
      await putRecord(store, where, { ...denied, artifactPath: record.body.artifactPath });
      return view(denied);
    });
  };
}
