import { type ConsistencyReport, consistencyFindingKinds, routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Gauge } from "prom-client";
import { routeOptions } from "../auth.js";
import { serviceUnavailable } from "../http-errors.js";
import { ErasureInProgressError } from "../knowledge/erasure-gate.js";

/**
 * POST /admin/check. The findings are kept as gauges on Cortex's registry, so an alert fires on the last
 * check's outcome whoever asked for it (the operator, on its schedule, or `kubectl remram check`).
 */
export function checkRoutes(check: () => Promise<ConsistencyReport>): FastifyPluginAsyncZod {
  return async (app) => {
    const registers = [app.cortex.metrics.registry];
    const findings = new Gauge({
      name: "cortex_consistency_findings",
      help: "Findings of the last consistency check, by kind",
      labelNames: ["kind"],
      registers,
    });
    const lastCheck = new Gauge({
      name: "cortex_consistency_last_check_timestamp_seconds",
      help: "When the last consistency check finished (Unix seconds)",
      registers,
    });
    const duration = new Gauge({
      name: "cortex_consistency_check_duration_seconds",
      help: "How long the last consistency check took",
      registers,
    });

    app.post(routes.consistencyCheck.url, routeOptions(routes.consistencyCheck), async (request) => {
      let report: ConsistencyReport;
      try {
        report = await check();
      } catch (error) {
        if (error instanceof ErasureInProgressError) throw serviceUnavailable(error.message);
        throw error;
      }
      for (const kind of consistencyFindingKinds) findings.set({ kind }, report.byKind[kind] ?? 0);
      lastCheck.set(Date.parse(report.checkedAt) / 1000 + report.durationMs / 1000);
      duration.set(report.durationMs / 1000);
      // Ids and kinds only: a finding never carries stored content.
      request.log[report.consistent ? "info" : "warn"](
        { counts: report.counts, byKind: report.byKind, durationMs: report.durationMs },
        report.consistent ? "consistency check found nothing wrong" : "consistency check reported findings",
      );
      return report;
    });
  };
}
