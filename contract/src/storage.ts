import { z } from "zod";
import { isoTimestamp } from "./common.js";

/**
 * How much room Cortex has left (GET /admin/storage): its folders' volumes (workspace repository, archive),
 * OpenSearch's disk, and whether writes are being refused for want of space. A refused write is answered 507 and
 * never half-stored; reads go on. The operator turns this into the appliance's StorageAvailable condition.
 */
export const storageVolume = z.object({
  name: z.string(),
  sizeBytes: z.int().min(0),
  availableBytes: z.int().min(0),
});

export const storageStatus = z.object({
  volumes: z.array(storageVolume),
  opensearch: z.object({
    /** Used share of the fullest data node's disk; absent when OpenSearch could not be asked. */
    diskUsedPercent: z.number().min(0).max(100).optional(),
    /** OpenSearch's flood-stage watermark as configured (e.g. "95%"): past it, it blocks writes. */
    floodStageWatermark: z.string().max(64).optional(),
    /** Cortex's indices carry OpenSearch's read-only-allow-delete block: every write is refused until it lifts. */
    writeBlocked: z.boolean(),
  }),
  /** The last write refused for want of space, if one was in the last 10 minutes and none was stored since. */
  recentRefusal: z
    .object({
      at: isoTimestamp,
      cause: z.enum(["volume", "opensearch"]),
      message: z.string().max(500),
    })
    .optional(),
});
export type StorageStatus = z.output<typeof storageStatus>;
