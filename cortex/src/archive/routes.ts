import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { createRecord, type MaturationIndices } from "../dream/records.js";
import { principal } from "../schemas/common.js";
import { errorResponse } from "../schemas/index.js";
import { bulk, getDocument, type SearchResult, request as storeRequest } from "../store/opensearch.js";
import {
  clampAxis,
  coordinatesFor,
  dayOffset,
  decayScore,
  epochDay,
  mayRecall,
  memoryDocumentSchema,
  sha256Hex,
} from "./document.js";
import { ArchiveIntegrityError, ArchiveNotFoundError, type ArchiveStore } from "./store.js";

/** One entry of the archive's summary index: a card-catalogue line pointing at the immutable document. */
interface IndexEntry {
  hash: string;
  summary: string;
  epochDay: number;
  y: number;
  z: number;
  clusterId: string | null;
  decayScore: number;
  reinforcementCount: number;
  lastAccessedAt: string;
  ownerIds: string[];
  privacy: string;
  allowRecall: boolean;
  sourceSession: string;
  sourceChannel: string;
  createdAt: string;
  archivedAt: string;
}

export const archiveRequest = z
  .object({
    document: memoryDocumentSchema,
    summary: z.string().trim().min(1).max(4000),
    /** Where the summariser placed it; y defaults from privacy, z to 0. */
    placement: z.object({ y: z.number().optional(), z: z.number().optional() }).strict().optional(),
    clusterId: z.string().min(1).max(128).optional(),
  })
  .strict();

const summaryHit = z.object({
  hash: z.string(),
  summary: z.string(),
  coordinates: z.object({ x: z.int(), y: z.int(), z: z.int() }),
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

const recallableLevels = ["public", "household", "private"] as const;

export function archiveRoutes(
  archive: () => Promise<ArchiveStore>,
  indices: () => Promise<MaturationIndices>,
): FastifyPluginAsyncZod {
  return async (app) => {
    const notFound = (hash: string) => ({
      statusCode: 404,
      error: "Not Found",
      message: `no archived document ${hash}`,
    });

    app.post(
      "/archive",
      {
        schema: {
          summary: "Archive a redacted, compacted transcript range under the SHA-256 of its canonical bytes",
          body: archiveRequest,
          response: {
            200: z.object({
              hash: z.string(),
              stored: z.boolean(),
              coordinates: z.object({ x: z.int(), y: z.int(), z: z.int() }),
            }),
            400: errorResponse,
            401: errorResponse,
            503: errorResponse,
          },
        },
      },
      async (request) => {
        const { store, clock } = app.cortex;
        const where = await indices();
        const now = clock().toISOString();
        const { document, summary, placement, clusterId } = request.body;
        const { hash, stored } = await (await archive()).put(document);
        const coordinates = coordinatesFor(document, now, placement);
        const entry: IndexEntry = {
          hash,
          summary,
          epochDay: epochDay(document.createdAt),
          y: coordinates.y,
          z: coordinates.z,
          clusterId: clusterId ?? null,
          decayScore: 1,
          reinforcementCount: 0,
          lastAccessedAt: now,
          ownerIds: [...document.consentScope.ownerIds].sort(),
          privacy: document.consentScope.privacy,
          allowRecall: document.consentScope.allowRecall,
          sourceSession: document.source.sessionId,
          sourceChannel: document.source.channel,
          createdAt: document.createdAt,
          archivedAt: now,
        };
        // The first summary for a hash stays; archiving the same content again changes nothing.
        await storeRequest(store, "PUT", `/${where.archive}/_create/${hash}?refresh=wait_for`, entry, {
          ignore: [409],
        });
        return { hash, stored, coordinates };
      },
    );

    app.post(
      "/archive/search",
      {
        schema: {
          summary: "Search summaries by text and coordinates; returns summaries only, never documents",
          body: archiveSearchRequest,
          response: {
            200: z.object({ results: z.array(summaryHit) }),
            400: errorResponse,
            401: errorResponse,
          },
        },
      },
      async (request) => {
        const { store, clock } = app.cortex;
        const where = await indices();
        const now = clock().toISOString();
        const { principal: caller, query, x, y, z: depth, limit } = request.body;
        const identities = [caller.userId, ...(caller.householdId ? [caller.householdId] : [])];
        const today = epochDay(now);
        const filter: unknown[] = [
          { terms: { ownerIds: identities } },
          { bool: { must_not: { term: { privacy: "secret" } } } },
        ];
        if (x) filter.push({ range: { epochDay: { gte: today + x.min, lte: today + x.max } } });
        if (y) filter.push({ range: { y: { gte: clampAxis(y.min), lte: clampAxis(y.max) } } });
        if (depth) filter.push({ range: { z: { gte: clampAxis(depth.min), lte: clampAxis(depth.max) } } });
        const { body } = await storeRequest<SearchResult<IndexEntry>>(
          store,
          "POST",
          `/${where.archive}/_search`,
          {
            size: limit,
            query: { bool: { filter, ...(query ? { must: { match: { summary: query } } } : {}) } },
            sort: query ? [{ _score: "desc" }, { hash: "asc" }] : [{ createdAt: "desc" }, { hash: "asc" }],
          },
        );
        return {
          results: body.hits.hits.map(({ _source: e }) => ({
            hash: e.hash,
            summary: e.summary,
            coordinates: { x: dayOffset(e.createdAt, now), y: e.y, z: e.z },
            clusterId: e.clusterId,
            decayScore: decayScore({
              lastAccessedAt: e.lastAccessedAt,
              reinforcementCount: e.reinforcementCount,
              now,
            }),
            reinforcementCount: e.reinforcementCount,
            consent: { privacy: e.privacy, allowRecall: e.allowRecall },
            sourceSession: e.sourceSession,
            sourceChannel: e.sourceChannel,
            createdAt: e.createdAt,
          })),
        };
      },
    );

    app.get(
      "/archive/:hash",
      {
        schema: {
          summary: "The full archived document, only when the principal's consent and the policy allow it",
          params: z.object({ hash: z.string().regex(/^[a-f0-9]{64}$/, "a SHA-256 hex digest") }),
          querystring: principal,
          response: {
            200: z.object({ hash: z.string(), document: memoryDocumentSchema }),
            400: errorResponse,
            401: errorResponse,
            403: errorResponse,
            404: errorResponse,
            500: errorResponse,
          },
        },
      },
      async (request, reply) => {
        const { store, clock } = app.cortex;
        const where = await indices();
        const { hash } = request.params;
        const entry = await getDocument<IndexEntry>(store, where.archive, hash);
        if (!entry) return reply.code(404).send(notFound(hash));
        const decision = mayRecall(
          {
            ownerIds: entry.ownerIds,
            privacy: entry.privacy as (typeof recallableLevels)[number],
            allowRecall: entry.allowRecall,
          },
          request.query,
          recallableLevels,
        );
        if (!decision.allowed)
          return reply.code(403).send({ statusCode: 403, error: "Forbidden", message: decision.reason });
        try {
          const document = await (await archive()).get(hash);
          // Recall reinforces the summary and resets its decay clock.
          await storeRequest(store, "POST", `/${where.archive}/_update/${hash}`, {
            doc: { reinforcementCount: entry.reinforcementCount + 1, lastAccessedAt: clock().toISOString() },
          });
          return { hash, document };
        } catch (error) {
          if (error instanceof ArchiveNotFoundError) return reply.code(404).send(notFound(hash));
          if (error instanceof ArchiveIntegrityError) {
            request.log.error(
              { hash, location: error.location, actual: error.actualHash },
              "archive integrity failure",
            );
            return reply
              .code(500)
              .send({ statusCode: 500, error: "Archive Integrity Error", message: error.message });
          }
          throw error;
        }
      },
    );

    app.get(
      "/archive/verify",
      {
        schema: {
          summary: "Re-hash every archived document and report those that no longer match",
          response: {
            200: z.object({
              checked: z.int(),
              corrupt: z.array(
                z.object({ hash: z.string(), location: z.string(), problem: z.string().optional() }),
              ),
            }),
            401: errorResponse,
          },
        },
      },
      async () => {
        const store = await archive();
        return { checked: store.size, corrupt: await store.findCorrupt() };
      },
    );

    app.post(
      "/admin/erasure",
      {
        schema: {
          summary:
            "Really remove a user's data (knowledge, chunks, archived documents they own alone); audited",
          body: z
            .object({
              userId: z.string().min(1).max(128),
              requestedBy: z.string().min(1).max(256),
              reason: z.string().min(1).max(1024),
            })
            .strict(),
          response: {
            200: z.object({
              auditId: z.string(),
              knowledgeDeleted: z.int(),
              chunksDeleted: z.int(),
              archiveErased: z.int(),
            }),
            400: errorResponse,
            401: errorResponse,
          },
        },
      },
      async (request) => {
        const { store, clock } = app.cortex;
        const where = await indices();
        const { userId, requestedBy, reason } = request.body;
        const byOwner = { query: { term: { "owner.userId": userId } } };
        // Search then bulk-delete by id: delete_by_query lives in the reindex module, which a minimal node may lack.
        // A knowledge object's vector and neighbour list go with it.
        const deleted = async (
          index: string,
          query: { query: unknown },
          companions: readonly string[] = [],
        ) => {
          let count = 0;
          for (;;) {
            const { body: found } = await storeRequest<SearchResult<unknown>>(
              store,
              "POST",
              `/${index}/_search`,
              {
                ...query,
                size: 1000,
                _source: false,
              },
            );
            const ids = found.hits.hits.map((hit) => hit._id);
            if (ids.length === 0) return count;
            const lines = [index, ...companions].flatMap((target) =>
              ids.map((id) => ({ delete: { _index: target, _id: id } })),
            );
            await bulk(store, lines, { refresh: "true", timeoutMs: 120_000 });
            count += ids.length;
          }
        };
        const knowledgeDeleted = await deleted(store.indices.knowledge, byOwner, [
          store.indices.vectors,
          where.neighbours,
        ]);
        const chunksDeleted = await deleted(store.indices.chunks, byOwner);
        // Vectors whose object went before them (a write interrupted midway) go too.
        await deleted(store.indices.vectors, byOwner);
        // Documents the user owns alone go entirely; shared ones stay (another owner's data is not theirs to erase).
        const { body } = await storeRequest<SearchResult<IndexEntry>>(
          store,
          "POST",
          `/${where.archive}/_search`,
          {
            size: 10_000,
            _source: ["hash", "ownerIds"],
            query: { term: { ownerIds: userId } },
          },
        );
        const solelyOwned = body.hits.hits.map((h) => h._source).filter((e) => e.ownerIds.length === 1);
        const files = await archive();
        for (const entry of solelyOwned) {
          await files.erase(entry.hash);
          await storeRequest(
            store,
            "DELETE",
            `/${where.archive}/_doc/${entry.hash}?refresh=true`,
            undefined,
            { ignore: [404] },
          );
        }
        const at = clock().toISOString();
        const auditId = `erasure-${sha256Hex(`${userId}\n${requestedBy}\n${at}`).slice(0, 16)}`;
        const outcome = { knowledgeDeleted, chunksDeleted, archiveErased: solelyOwned.length };
        await createRecord(store, where, {
          kind: "audit",
          id: auditId,
          state: "erasure",
          createdAt: at,
          updatedAt: at,
          body: { action: "erasure", userId, requestedBy, reason, at, ...outcome },
        });
        request.log.warn({ auditId, userId, requestedBy, ...outcome }, "user data erased");
        return { auditId, ...outcome };
      },
    );
  };
}
