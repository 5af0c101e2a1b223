import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { Counter, Gauge } from "prom-client";
import { routeOptions } from "../auth.js";
import { conflict, HttpError, serviceUnavailable, volumeFull } from "../http-errors.js";
import { ErasureInProgressError } from "../knowledge/erasure-gate.js";
import { RestoreRefusedError } from "./restore.js";
import { BackupBusyError, BackupRefusedError, type BackupService } from "./service.js";

/** Errors a start answers with before anything runs: busy and refused are 409/404, an erasure 503. */
function startError(error: unknown): unknown {
  if (error instanceof BackupBusyError || error instanceof BackupRefusedError) return conflict(error.message);
  if (error instanceof RestoreRefusedError) return new HttpError(error.status, error.message);
  if (error instanceof ErasureInProgressError) return serviceUnavailable(error.message);
  return error;
}

/**
 * /admin/backups and /admin/restore. The last successful backup's time and size are gauges on Cortex's registry
 * (read from the destination at start, so a restarted Cortex does not report "never"), and failures a counter:
 * the alert on stale backups needs nothing but a scrape.
 */
export function backupRoutes(service: BackupService): FastifyPluginAsyncZod {
  return async (app) => {
    const registers = [app.cortex.metrics.registry];
    const lastSuccess = new Gauge({
      name: "cortex_backup_last_success_timestamp_seconds",
      help: "When the newest complete backup in the destination finished (Unix seconds); 0 when there is none",
      registers,
    });
    const lastSize = new Gauge({
      name: "cortex_backup_last_size_bytes",
      help: "Size of the newest complete backup",
      registers,
    });
    const lastDuration = new Gauge({
      name: "cortex_backup_last_duration_seconds",
      help: "How long the last successful backup took",
      registers,
    });
    const failures = new Counter({
      name: "cortex_backup_failures_total",
      help: "Backups that failed (the destination full or unreachable, OpenSearch down)",
      labelNames: ["reason"],
      registers,
    });
    const configured = new Gauge({
      name: "cortex_backup_configured",
      help: "1 when Cortex has a backup destination",
      registers,
    });
    configured.set(service.configured ? 1 : 0);
    lastSuccess.set(0);
    if (service.configured) {
      void service.backups().then(
        ({ backups: [newest] }) => {
          if (newest === undefined) return;
          lastSuccess.set(Date.parse(newest.completedAt) / 1000);
          lastSize.set(newest.bytes);
        },
        (error: unknown) => app.log.warn({ err: error }, "could not list the backup destination"),
      );
    }

    app.post(routes.backupCreate.url, routeOptions(routes.backupCreate), async (request, reply) => {
      let started: Awaited<ReturnType<BackupService["startBackup"]>>;
      try {
        started = await service.startBackup(
          (request.body?.attachments ?? []).map((file) => ({
            name: file.name,
            content: Buffer.from(file.contentBase64, "base64"),
          })),
        );
      } catch (error) {
        throw startError(error);
      }
      const { id, startedAt, finished } = started;
      request.log.info({ backupId: id, caller: request.caller }, "backup started");
      void finished.then(({ manifest, error, housekeepingError, durationMs }) => {
        if (manifest !== undefined) {
          lastSuccess.set(Date.parse(manifest.completedAt) / 1000);
          lastSize.set(manifest.bytes);
          lastDuration.set(durationMs / 1000);
          app.log.info({ backupId: id, bytes: manifest.bytes, counts: manifest.counts }, "backup complete");
        }
        if (housekeepingError !== undefined)
          app.log.warn(
            { backupId: id, err: housekeepingError },
            "backup complete; retention or tombstone sync failed",
          );
        if (error !== undefined) {
          const reason =
            error instanceof Error && volumeFull(error)
              ? "destination_full"
              : error instanceof ErasureInProgressError
                ? "erasure"
                : "error";
          failures.inc({ reason });
          app.log.error({ backupId: id, err: error }, "backup failed");
        }
      });
      return reply.code(202).send({ id, startedAt });
    });

    app.get(routes.backupList.url, routeOptions(routes.backupList), async () => service.backups());

    app.post(routes.restoreStart.url, routeOptions(routes.restoreStart), async (request, reply) => {
      let started: Awaited<ReturnType<BackupService["startRestore"]>>;
      try {
        started = await service.startRestore(request.body.backupId);
      } catch (error) {
        throw startError(error);
      }
      const { id, startedAt, finished } = started;
      request.log.warn({ backupId: id, caller: request.caller }, "restore started");
      void finished.then((report) => {
        if (report === undefined)
          app.log.error({ backupId: id, ...service.restoreStatus().lastFailure }, "restore failed");
        else
          app.log.warn(
            { backupId: id, counts: report.counts, erased: report.erasuresReplayed },
            "restore complete",
          );
      });
      return reply.code(202).send({ id, startedAt });
    });

    app.get(routes.restoreStatus.url, routeOptions(routes.restoreStatus), async () =>
      service.restoreStatus(),
    );
  };
}
