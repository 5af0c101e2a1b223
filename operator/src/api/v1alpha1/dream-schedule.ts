import { z } from "zod";
import {
  ageColumn,
  applianceRef,
  conditions,
  type KindDefinition,
  readyColumns,
  timestamp,
  withCel,
} from "./common.js";

/**
 * Five-field cron or a macro. The CRD checks the shape; the operator parses it with croner and reports
 * InvalidSchedule for what a regular expression cannot see (e.g. minute 61).
 */
export const cronPattern =
  "^(@(yearly|annually|monthly|weekly|daily|midnight|hourly)|[0-9*/,?LW#A-Za-z-]+( +[0-9*/,?LW#A-Za-z-]+){4})$";

/** IANA zone names ("Europe/Berlin", "UTC", "America/Argentina/Buenos_Aires"); croner rejects unknown ones. */
export const timeZonePattern = "^[A-Za-z][A-Za-z0-9_+-]*(/[A-Za-z0-9_+-]+){0,2}$";

export const dreamScheduleSpec = z
  .object({
    applianceRef,
    schedule: withCel(
      z.string().min(1).max(128).describe("Cron expression (five fields) or a macro such as @daily."),
      {
        rule: `self.matches('${cronPattern}')`,
        message: "schedule must be a five-field cron expression or a macro such as @daily",
      },
    ),
    timeZone: withCel(
      z.string().min(1).max(64).default("UTC").describe("IANA time zone the schedule is read in."),
      {
        rule: `self.matches('${timeZonePattern}')`,
        message: "timeZone must be an IANA time zone name such as Europe/Berlin",
      },
    ),
    concurrencyPolicy: z
      .enum(["Forbid", "Allow"])
      .default("Forbid")
      .describe("Forbid skips a run while the previous cycle is still running."),
    startingDeadlineSeconds: z
      .int()
      .min(1)
      .max(86400)
      .optional()
      .describe("A run that cannot start within this many seconds of its time is skipped."),
    suspend: z.boolean().default(false),
    cycle: withCel(
      z
        .object({
          dryRun: z.boolean().default(false).describe("Compute and report, write nothing."),
          maxProposals: z
            .int()
            .min(0)
            .max(100)
            .default(10)
            .describe("Ceiling on artifact proposals per cycle."),
          mirrorProposals: z
            .boolean()
            .default(true)
            .describe("Mirror Cortex's pending proposals as ArtifactProposal objects after a cycle."),
        })
        .strict()
        .prefault({}),
      {
        rule: "!(self.dryRun && self.maxProposals > 0 && self.mirrorProposals)",
        message: "a dryRun cycle writes no proposals: set maxProposals to 0 or mirrorProposals to false",
      },
    ),
  })
  .strict();

const runCounts = z
  .record(
    z
      .string()
      .max(63)
      .regex(/^[a-zA-Z][a-zA-Z0-9]*$/),
    z.int().min(0),
  )
  .meta({ maxProperties: 32 });

export const dreamScheduleStatus = z
  .object({
    observedGeneration: z.int().min(0).optional(),
    conditions: conditions.optional(),
    lastScheduleTime: timestamp.optional(),
    lastSuccessfulTime: timestamp.optional(),
    nextScheduleTime: timestamp.optional(),
    lastRun: z
      .object({
        startedAt: timestamp,
        finishedAt: timestamp.optional(),
        outcome: z.enum(["Running", "Succeeded", "Failed", "Skipped"]),
        message: z.string().max(1024).optional(),
        counts: runCounts.optional().describe("The dream report's counts."),
        mirroredProposals: z.int().min(0).max(1000).optional(),
      })
      .strict()
      .optional(),
  })
  .strict();

export type DreamScheduleSpec = z.output<typeof dreamScheduleSpec>;
export type DreamScheduleStatus = z.output<typeof dreamScheduleStatus>;

/** The reasons of a DreamSchedule's conditions (Ready, Running), which users match on. */
export const DreamScheduleReason = {
  Scheduled: "Scheduled",
  Suspended: "Suspended",
  InvalidSchedule: "InvalidSchedule",
  DreamCycleRunning: "DreamCycleRunning",
  Idle: "Idle",
} as const;
export type DreamScheduleReason = (typeof DreamScheduleReason)[keyof typeof DreamScheduleReason];

export const dreamScheduleKind: KindDefinition = {
  kind: "DreamSchedule",
  plural: "dreamschedules",
  singular: "dreamschedule",
  shortNames: ["dream", "ds"],
  categories: ["remram"],
  description: "When Cortex runs its dream cycle (reconciliation, principles, proposals) for one appliance.",
  spec: dreamScheduleSpec,
  status: dreamScheduleStatus,
  printerColumns: [
    ...readyColumns,
    { name: "Schedule", type: "string", jsonPath: ".spec.schedule" },
    { name: "Suspend", type: "boolean", jsonPath: ".spec.suspend" },
    { name: "Last", type: "date", jsonPath: ".status.lastScheduleTime" },
    // "date" columns render a future time as <invalid>; the timestamp itself reads well.
    { name: "Next", type: "string", jsonPath: ".status.nextScheduleTime" },
    ageColumn,
    { name: "TimeZone", type: "string", jsonPath: ".spec.timeZone", priority: 1 },
  ],
};
