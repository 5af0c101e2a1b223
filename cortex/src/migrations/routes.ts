import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Gauge } from "prom-client";
import { routeOptions } from "../auth.js";
import { conflict } from "../http-errors.js";
import { templateVersion } from "../store/templates.js";
import { type KnowledgeRebuild, RebuildBusyError } from "./rebuild-job.js";

/** /admin/migrations: the rebuild's progress (also a gauge, for a dashboard) and the admin's confirmation. */
export function migrationRoutes(job: () => KnowledgeRebuild | undefined): FastifyPluginAsyncZod {
  return async (app) => {
    new Gauge({
      name: "cortex_index_rebuild_remaining",
      help: "Knowledge documents still to be copied by a rebuild after an upgrade (0 when none runs)",
      registers: [app.cortex.metrics.registry],
      collect() {
        const rebuild = job()?.status().rebuild;
        this.set(
          rebuild === undefined || rebuild.finishedAt ? 0 : Math.max(0, rebuild.total - rebuild.copied),
        );
      },
    });
    app.get(routes.migrationStatus.url, routeOptions(routes.migrationStatus), async () => {
      const current = job();
      if (current !== undefined) return current.status();
      const { rebuiltIndexKeepDays: keepDays } = app.cortex.config;
      return { templateVersion, state: "starting" as const, kept: [], keepDays };
    });
    app.post(routes.migrationsConfirm.url, routeOptions(routes.migrationsConfirm), async () => {
      const current = job();
      if (current === undefined)
        throw conflict("Cortex is still setting up its indices; confirm again shortly");
      try {
        return { deleted: await current.confirm() };
      } catch (error) {
        if (error instanceof RebuildBusyError) throw conflict(error.message);
        throw error;
      }
    });
  };
}
