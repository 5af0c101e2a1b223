import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { forbidden, HttpError, notFound } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { archiveDocument, eraseUserData, type Recall, recallDocument, searchSummaries } from "./service.js";
import { ArchiveIntegrityError, type ArchiveStore } from "./store.js";

export function archiveRoutes(
  archive: () => Promise<ArchiveStore>,
  indices: () => Promise<MaturationIndices>,
): FastifyPluginAsyncZod {
  return async (app) => {
    const noDocument = (hash: string) => notFound(`no archived document ${hash}`);

    app.post(routes.archive.url, { schema: routes.archive.schema }, async (request) =>
      archiveDocument(app.cortex, await indices(), archive, request.body),
    );

    app.post(routes.archiveSearch.url, { schema: routes.archiveSearch.schema }, async (request) => ({
      results: await searchSummaries(app.cortex, await indices(), request.body),
    }));

    app.get(routes.archiveRecall.url, { schema: routes.archiveRecall.schema }, async (request) => {
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
    });

    app.get(routes.archiveVerify.url, { schema: routes.archiveVerify.schema }, async () => {
      const store = await archive();
      return { checked: store.size, corrupt: await store.findCorrupt() };
    });

    app.post(routes.erasure.url, { schema: routes.erasure.schema }, async (request) => {
      const { userId, requestedBy } = request.body;
      const { auditId, ...outcome } = await eraseUserData(app.cortex, await indices(), archive, request.body);
      request.log.warn({ auditId, userId, requestedBy, ...outcome }, "user data erased");
      return { auditId, ...outcome };
    });
  };
}
