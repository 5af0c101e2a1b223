import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { renderPersonExport } from "../core/person-export.js";
import { forbidden, HttpError, notFound } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { type ErasureStores, eraseUserData } from "./erasure.js";
import { exportPerson } from "./export.js";
import { archiveDocument, type Recall, recallDocument, searchSummaries } from "./service.js";
import { ArchiveIntegrityError, type ArchiveStore } from "./store.js";
import { defaultTierRules } from "./tiering.js";
import { runTiering, tieringScheduler } from "./tiering-pass.js";
import { fileTranscript } from "./transcript-filing.js";

export function archiveRoutes(
  archive: () => Promise<ArchiveStore>,
  indices: () => Promise<MaturationIndices>,
  history?: ErasureStores["history"],
  /** Told of each erasure once done (the backup destination records its tombstone); may fail without harm. */
  afterErasure?: (userId: string, erasedAt: string) => Promise<void>,
): FastifyPluginAsyncZod {
  return async (app) => {
    const noDocument = (hash: string) => notFound(`no archived document ${hash}`);
    const { config } = app.cortex;
    const rules = {
      ...defaultTierRules,
      warmAfterDays: config.archiveWarmAfterDays,
      coldAfterDays: config.archiveColdAfterDays,
    };
    const tiering = tieringScheduler(
      async () => runTiering(app.cortex, await indices(), await archive(), rules),
      config.archiveTieringIntervalMinutes * 60_000,
    );
    const afterWrite = () =>
      tiering.nudge((error) => app.log.error({ err: error }, "archive tiering pass failed"));

    app.post(routes.archive.url, routeOptions(routes.archive), async (request) => {
      const filed = await archiveDocument(app.cortex, await indices(), archive, request.body);
      afterWrite();
      return filed;
    });

    app.post(routes.archiveTranscript.url, routeOptions(routes.archiveTranscript), async (request) => {
      const filed = await fileTranscript(app.cortex, await indices(), archive, request.body, (error) =>
        request.log.warn({ err: error }, "transcript chunks stored without vectors"),
      );
      request.log.info(
        {
          hash: filed.hash,
          stored: filed.stored,
          chunks: filed.chunks.ids.length,
          created: filed.chunks.created,
        },
        "transcript archived",
      );
      afterWrite();
      return filed;
    });

    app.post(routes.archiveTiering.url, routeOptions(routes.archiveTiering), async () => tiering.runNow());

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

    app.post(routes.personExport.url, routeOptions(routes.personExport), async (request) => {
      const { userId, requestedBy, format } = request.body;
      if (request.caller === "app" && requestedBy !== userId) {
        throw forbidden(
          "the app may export only the requesting person's own data (requestedBy must equal userId)",
        );
      }
      const exported = await exportPerson(app.cortex, await indices(), userId);
      const counts = { knowledge: exported.knowledge.length, transcripts: exported.transcripts.length };
      // Who took whose data out, with counts and never content.
      request.log.info({ userId, requestedBy, caller: request.caller, counts }, "user data exported");
      return format === "markdown"
        ? { format, markdown: renderPersonExport(exported), counts }
        : { format, ...exported };
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
      // The next backup copies every tombstone into the destination: a failure here only delays that.
      await afterErasure?.(userId, outcome.erasedAt).catch((error: unknown) =>
        request.log.warn({ err: error, auditId }, "could not record the erasure in the backup destination"),
      );
      return outcome;
    });
  };
}
