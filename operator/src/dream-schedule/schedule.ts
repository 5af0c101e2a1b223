/**
 * When a DreamSchedule should run, CronJob-style and pure: the most recent scheduled time since the last run,
 * the starting deadline, suspend and the concurrency policy decide between running, skipping and waiting.
 */
import { Cron } from "croner";

export class InvalidScheduleError extends Error {
  override readonly name = "InvalidScheduleError";
}

export function parseSchedule(schedule: string, timeZone: string): Cron {
  try {
    const cron = new Cron(schedule, { timezone: timeZone, paused: true, mode: "5-part" });
    // croner checks the zone lazily; ask once so an unknown zone fails here.
    cron.nextRun(new Date(0));
    return cron;
  } catch (error) {
    throw new InvalidScheduleError(error instanceof Error ? error.message : String(error));
  }
}

/** Like the CronJob controller: more missed start times than this means something is badly wrong. */
export const maxMissedStartTimes = 100;

export interface ScheduleInput {
  schedule: string;
  timeZone: string;
  suspend: boolean;
  concurrencyPolicy: "Forbid" | "Allow";
  startingDeadlineSeconds?: number;
  /** status.lastScheduleTime, else the object's creation time. */
  lastScheduleMs: number;
  nowMs: number;
  /** A cycle this schedule started is still running. */
  running: boolean;
  /** `kubectl remram dream now`: a manual request (annotation time); honoured once, even while suspended. */
  requestedMs?: number;
  /** status.lastScheduleTime only (undefined before the first run): a request is new when it is later than that. */
  lastRunMs?: number;
}

export type ScheduleDecision =
  | { action: "wait"; nextMs?: number }
  | { action: "run"; scheduledMs: number; nextMs?: number; missed: number }
  | {
      action: "skip";
      scheduledMs: number;
      nextMs?: number;
      reason: "MissedStartingDeadline" | "PreviousRunActive";
    };

export function decideRun(input: ScheduleInput): ScheduleDecision {
  const cron = parseSchedule(input.schedule, input.timeZone);
  const nextAfter = (ms: number): number | undefined => cron.nextRun(new Date(ms))?.getTime();
  const nextMs = nextAfter(input.nowMs);
  const requested =
    input.requestedMs !== undefined &&
    (input.lastRunMs === undefined || input.requestedMs > input.lastRunMs) &&
    input.requestedMs <= input.nowMs
      ? input.requestedMs
      : undefined;
  if (requested !== undefined) {
    if (input.running && input.concurrencyPolicy === "Forbid") {
      return { action: "skip", scheduledMs: requested, reason: "PreviousRunActive", ...opt(nextMs) };
    }
    return { action: "run", scheduledMs: requested, missed: 0, ...opt(nextMs) };
  }
  if (input.suspend) return { action: "wait" };
  // With a deadline, only start times inside the window can still run: look no further back than that.
  const windowStart =
    input.startingDeadlineSeconds === undefined
      ? input.lastScheduleMs
      : Math.max(input.lastScheduleMs, input.nowMs - input.startingDeadlineSeconds * 1000 - 1);
  let scheduledMs: number | undefined;
  let missed = 0;
  for (let candidate = nextAfter(windowStart); candidate !== undefined && candidate <= input.nowMs; ) {
    scheduledMs = candidate;
    missed++;
    if (missed > maxMissedStartTimes) {
      // Jump to the latest start time instead of walking thousands of them.
      const latest = cron.previousRuns(1, new Date(input.nowMs + 1))[0]?.getTime();
      if (latest !== undefined) scheduledMs = latest;
      break;
    }
    candidate = nextAfter(candidate);
  }
  if (scheduledMs === undefined) {
    // Nothing due since the last run; a start time missed entirely before the window counts as a skip.
    const missedBeforeWindow = nextAfter(input.lastScheduleMs);
    if (missedBeforeWindow !== undefined && missedBeforeWindow <= input.nowMs) {
      return {
        action: "skip",
        scheduledMs: missedBeforeWindow,
        reason: "MissedStartingDeadline",
        ...opt(nextMs),
      };
    }
    return { action: "wait", ...opt(nextMs) };
  }
  if (input.running && input.concurrencyPolicy === "Forbid") {
    return { action: "skip", scheduledMs, reason: "PreviousRunActive", ...opt(nextMs) };
  }
  return { action: "run", scheduledMs, missed: missed - 1, ...opt(nextMs) };
}

function opt(nextMs: number | undefined): { nextMs?: number } {
  return nextMs === undefined ? {} : { nextMs };
}
