import { type DreamReportResponse, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { conflict, notFound } from "../http-errors.js";
import { getRecord, type MaturationIndices } from "../knowledge/records.js";
import type { DreamReport } from "./cycle.js";
import { DreamBusyError, type DreamRunner } from "./service.js";

function withRunId(report: DreamReport): DreamReportResponse {
  return {
    ...report,
    runId: report.cycleId,
    reviewItems: report.reviewItems.map((r) => ({ ...r, objectIds: [...r.objectIds] })),
    dimensionPromotions: report.dimensionPromotions.map((d) => ({ ...d, values: [...d.values] })),
  };
}

export function dreamRoutes(
  runner: DreamRunner,
  indices: () => Promise<MaturationIndices>,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(routes.dream.url, routeOptions(routes.dream), async (request) => {
      try {
        const { report } = runner.run(request.body);
        return withRunId(await report);
      } catch (error) {
        if (!(error instanceof DreamBusyError)) throw error;
        throw conflict(error.message, { cycleId: error.cycleId });
      }
    });

    app.get(routes.dreamStatus.url, routeOptions(routes.dreamStatus), async () => {
      const status = runner.status();
      return status === null ? { running: false } : { running: true, ...status };
    });

    app.get(routes.dreamReport.url, routeOptions(routes.dreamReport), async (request, reply) => {
      const status = runner.status();
      if (status?.cycleId === request.params.cycleId)
        return reply.code(202).send({ running: true, ...status });
      const record = await getRecord<DreamReport>(
        app.cortex.store,
        await indices(),
        "dreamReport",
        request.params.cycleId,
      );
      if (!record) {
        throw notFound(`no dream cycle ${request.params.cycleId}`);
      }
      return withRunId(record.body);
    });
  };
}
