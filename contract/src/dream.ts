import { z } from "zod";
import { errorResponse } from "./errors.js";

/** What a dream cycle counts; its report carries every one of them. */
export const dreamCountNames = [
  "objectsScanned",
  "neighbourListsBuilt",
  "neighbourListsPending",
  "vectorsBackfilled",
  "changedObjects",
  "contradictionsDetected",
  "contradictionsResolved",
  "invalidated",
  "duplicatesMerged",
  "reviewItems",
  "survived",
  "decayed",
  "demoted",
  "principlesCreated",
  "principlesReinforced",
  "principlesWorded",
  "principlesDeferred",
  "dimensionsPromoted",
  "proposalsGenerated",
  "writeConflicts",
] as const;
export type DreamCountName = (typeof dreamCountNames)[number];

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
export type DreamRequest = z.output<typeof dreamRequest>;
export type DreamRequestInput = z.input<typeof dreamRequest>;

// Reports stored before a count existed read back with it at 0.
const counts = z.object(
  Object.fromEntries(dreamCountNames.map((name) => [name, z.int().min(0).default(0)])) as Record<
    DreamCountName,
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
  merges: z
    .array(z.object({ survivorId: z.string(), mergedIds: z.array(z.string()) }))
    .default([])
    .describe(
      "Near-duplicates merged this cycle (at most 100 listed; counts.duplicatesMerged has them all): the survivor " +
        "keeps its id and lists the others' sessions and turns; each merged one is invalidated and linked " +
        "supersededBy the survivor, never deleted.",
    ),
  deferredPrinciples: z
    .array(z.object({ principleId: z.string(), reason: z.string() }))
    .default([])
    .describe(
      "Principles whose pattern qualified but that got no usable wording from the reflection model (unavailable, " +
        "or its reply malformed twice); the next cycle tries again. At most 100 listed.",
    ),
  timingsMs: z
    .record(z.string(), z.number())
    .optional()
    .describe("Milliseconds per phase: load, neighbours, plan, wording, write."),
});
export type DreamReportResponse = z.output<typeof dreamReportSchema>;

export const dreamStatusSchema = z.object({
  running: z.boolean(),
  cycleId: z.string().optional(),
  startedAt: z.string().optional(),
  phase: z.string().optional(),
  objectsLoaded: z.int().optional(),
  neighbourListsBuilt: z.int().optional(),
});
export type DreamStatus = z.output<typeof dreamStatusSchema>;

export const dreamCycleParams = z.object({ cycleId: z.string().min(1).max(128) });

/** 409 from /dream: a cycle is already running. */
export const dreamBusyResponse = errorResponse.extend({ cycleId: z.string() });
