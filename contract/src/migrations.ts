import { z } from "zod";
import { isoTimestamp } from "./common.js";

/**
 * Where Cortex's index migrations stand (GET /admin/migrations). A release whose knowledge template cannot be applied
 * in place (a changed analyzer) rebuilds the knowledge index beside the live one after start-up: reads go on, writes
 * get 503 until the alias moves. The index it replaced is kept, write-blocked, for a `helm rollback`, until an admin
 * confirms (POST /admin/migrations/confirm) or the retention passes.
 */
const indexName = z.string().min(1).max(255);

export const keptIndex = z.object({
  index: indexName,
  /** The rebuilt index that took over from it. */
  replacedBy: indexName.optional(),
  /** When it did; unknown (absent) keeps the index until an admin confirms. */
  replacedAt: isoTimestamp.optional(),
  /** When the retention deletes it, if Cortex knows. */
  deleteAfter: isoTimestamp.optional(),
});
export type KeptIndex = z.output<typeof keptIndex>;

export const migrationStatus = z.object({
  /** The template version this Cortex builds indices from. */
  templateVersion: z.int().min(1),
  /**
   * starting: indices being set up; current: nothing to migrate; rebuilding: the copy runs; waiting: it failed and is
   * tried again (`waiting` says why), the old index serving meanwhile.
   */
  state: z.enum(["starting", "current", "rebuilding", "waiting"]),
  /** The running rebuild, or the last one this process ran. */
  rebuild: z
    .object({
      from: indexName,
      to: indexName,
      fromTemplateVersion: z.int().min(0),
      startedAt: isoTimestamp,
      finishedAt: isoTimestamp.optional(),
      total: z.int().min(0),
      copied: z.int().min(0),
    })
    .optional(),
  waiting: z.string().max(500).optional(),
  kept: z.array(keptIndex),
  keepDays: z.number().min(0),
});
export type MigrationStatus = z.output<typeof migrationStatus>;

export const migrationsConfirmed = z.object({
  /** The kept indices deleted: a rollback to the release before the migration is no longer possible. */
  deleted: z.array(indexName),
});
export type MigrationsConfirmed = z.output<typeof migrationsConfirmed>;
