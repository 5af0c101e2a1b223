import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { conflict, notFound } from "../http-errors.js";
import { getRecord, type MaturationIndices } from "../knowledge/records.js";
import { errorResponse } from "../schemas/index.js";
import { type DreamReport, dreamCountNames } from "./cycle.js";
import { DreamBusyError, type DreamRunner } from "./service.js";

export const dreamRequest = z
  .object({
    dryRun: z.boolean().default(false),
    maxProposals: z.int().min(0).max(100).default(10),
    full: z
      .boolean()
      .default(false)
      .describe("Compare every pair instead of only pairs touching what changed since the last cycle."),
    neighbourLookupSeconds: z
      .int()
      .min(0)
      .max(3600)
      .optional()
      .describe(
        "Time this cycle may spend on k-NN lookups for objects without a neighbour list (default: the configured " +
          "limit, 50 s). Raise it once to finish the graph after a large import.",
      ),
  })
  .strict();

// Reports stored before a count existed read back with it at 0.
const counts = z.object(
  Object.fromEntries(dreamCountNames.map((name) => [name, z.int().min(0).default(0)])) as Record<
    (typeof dreamCountNames)[number],
    z.ZodDefault<z.ZodInt>
  >,
);

export const dreamReportSchema = z.object({
  cycleId: z.string(),
  /** The operator's client reads the cycle id under this name. */
  runId: z.string(),
  mode: z.enum(["full", "incremental"]),
  startedAt: z.string(),
  finishedAt: z.string(),
  counts,
  reviewItems: z.array(
    z.object({ id: z.string(), kind: z.string(), objectIds: z.array(z.string()), reason: z.string() }),
  ),
  dimensionPromotions: z.array(
    z.object({
      name: z.string(),
      values: z.array(z.string()),
      occurrences: z.int(),
      meanConfidence: z.number(),
    }),
  ),
  proposalIds: z.array(z.string()),
  timingsMs: z
    .record(z.string(), z.number())
    .optional()
    .describe("Milliseconds per phase: load, neighbours, plan, write."),
});

export const dreamStatusSchema = z.object({
  running: z.boolean(),
  cycleId: z.string().optional(),
  startedAt: z.string().optional(),
  phase: z.string().optional(),
  objectsLoaded: z.int().optional(),
  neighbourListsBuilt: z.int().optional(),
});

const busyResponse = errorResponse.extend({ cycleId: z.string() });

function withRunId(report: DreamReport): z.infer<typeof dreamReportSchema> {
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
    app.post(
      "/dream",
      {
        schema: {
          summary: "Run one reconciliation cycle (single-flight) and return its report",
          body: dreamRequest,
          response: {
            200: dreamReportSchema,
            400: errorResponse,
            401: errorResponse,
            409: busyResponse,
            503: errorResponse,
          },
        },
      },
      async (request) => {
        try {
          const { report } = runner.run(request.body);
          return withRunId(await report);
        } catch (error) {
          if (!(error instanceof DreamBusyError)) throw error;
          throw conflict(error.message, { cycleId: error.cycleId });
        }
      },
    );

    app.get(
      "/dream/status",
      {
        schema: {
          summary: "The running dream cycle, if any",
          response: { 200: dreamStatusSchema, 401: errorResponse },
        },
      },
      async () => {
        const status = runner.status();
        return status === null ? { running: false } : { running: true, ...status };
      },
    );

    app.get(
      "/dream/:cycleId",
      {
        schema: {
          summary: "The stored report of a finished cycle",
          params: z.object({ cycleId: z.string().min(1).max(128) }),
          response: {
            200: dreamReportSchema,
            202: dreamStatusSchema,
            401: errorResponse,
            404: errorResponse,
          },
        },
      },
      async (request, reply) => {
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
      },
    );
  };
}
