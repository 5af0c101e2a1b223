import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { forbidden, HttpError, notFound } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { principal } from "../schemas/common.js";
import { errorResponse } from "../schemas/index.js";
import { memoryDocumentSchema } from "./document.js";
import { archiveDocument, eraseUserData, type Recall, recallDocument, searchSummaries } from "./service.js";
import { ArchiveIntegrityError, type ArchiveStore } from "./store.js";

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

export function archiveRoutes(
  archive: () => Promise<ArchiveStore>,
  indices: () => Promise<MaturationIndices>,
): FastifyPluginAsyncZod {
  return async (app) => {
    const noDocument = (hash: string) => notFound(`no archived document ${hash}`);

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
      async (request) => archiveDocument(app.cortex, await indices(), archive, request.body),
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
      async (request) => ({ results: await searchSummaries(app.cortex, await indices(), request.body) }),
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
      async (request) => {
        const { hash } = request.params;
        let recall: Recall;
        try {
          recall = await recallDocument(app.cortex, await indices(), archive, hash, request.query);
        } catch (error) {
          if (error instanceof ArchiveIntegrityError) {
            request.log.error(
              { hash, location: error.location, actual: error.actualHash },
              "archive integrity failure",
            );
            throw new HttpError(500, error.message, {}, "Archive Integrity Error");
          }
          throw error;
        }
        if (recall.outcome === "missing") throw noDocument(hash);
        if (recall.outcome === "refused") throw forbidden(recall.reason);
        return { hash, document: recall.document };
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
        const { userId, requestedBy } = request.body;
        const { auditId, ...outcome } = await eraseUserData(
          app.cortex,
          await indices(),
          archive,
          request.body,
        );
        request.log.warn({ auditId, userId, requestedBy, ...outcome }, "user data erased");
        return { auditId, ...outcome };
      },
    );
  };
}
