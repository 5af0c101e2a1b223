import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { forbidden, HttpError, notFound } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { type ErasureStores, eraseUserData } from "./erasure.js";
import { archiveDocument, type Recall, recallDocument, searchSummaries } from "./service.js";
import { ArchiveIntegrityError, type ArchiveStore } from "./store.js";

export function archiveRoutes(
  archive: () => Promise<ArchiveStore>,
  indices: () => Promise<MaturationIndices>,
  history?: ErasureStores["history"],
): FastifyPluginAsyncZod {
  return async (app) => {
    const noDocument = (hash: string) => notFound(`no archived document ${hash}`);

    app.post(routes.archive.url, routeOptions(routes.archive), async (request) =>
      archiveDocument(app.cortex, await indices(), archive, request.body),
    );

    app.post(routes.archiveSearch.url, routeOptions(routes.archiveSearch), async (request) => ({
      results: await searchSummaries(app.cortex, await indices(), request.body),
    }));

    app.get(routes.archiveRecall.url, routeOptions(routes.archiveRecall), async (request) => {
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

    app.get(routes.archiveVerify.url, routeOptions(routes.archiveVerify), async () => {
      const store = await archive();
      return { checked: store.size, corrupt: await store.findCorrupt() };
    });

    app.post(routes.erasure.url, routeOptions(routes.erasure), async (request) => {
      const { userId, requestedBy } = request.body;
      // The app acts for the person signed in to it: a person may erase their own data, nobody else's.
      if (request.caller === "app" && requestedBy !== userId) {
        throw forbidden(
          "the app may erase only the requesting person's own data (requestedBy must equal userId)",
        );
      }
      const stores = { indices: await indices(), archive, history };
      const outcome = await eraseUserData(app.cortex, stores, request.body, request.caller);
      const { auditId, counts, durationMs } = outcome;
      request.log.warn(
        { auditId, userId, requestedBy, caller: request.caller, counts, durationMs },
        "user data erased",
      );
      return outcome;
    });
  };
}
