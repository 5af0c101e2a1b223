import { describe, expect, it } from "vitest";
import { decideRun, InvalidScheduleError, parseSchedule, type ScheduleInput } from "./schedule.js";

const at = (iso: string) => Date.parse(iso);

function input(overrides: Partial<ScheduleInput>): ScheduleInput {
  return {
    schedule: "0 3 * * *",
    timeZone: "UTC",
    suspend: false,
    concurrencyPolicy: "Forbid",
    lastScheduleMs: at("2026-01-01T03:00:00Z"),
    nowMs: at("2026-01-01T12:00:00Z"),
    running: false,
    ...overrides,
  };
}

describe("dream scheduling", () => {
  it("waits until the next start time and says when that is", () => {
    expect(decideRun(input({}))).toEqual({ action: "wait", nextMs: at("2026-01-02T03:00:00Z") });
  });

  it("reads the schedule in its time zone, across a daylight-saving change", () => {
    const decision = decideRun(
      input({
        timeZone: "Europe/Berlin",
        lastScheduleMs: at("2026-03-28T02:00:00Z"),
        nowMs: at("2026-03-28T12:00:00Z"),
      }),
    );
    // 03:00 in Berlin is 01:00 UTC once summer time has begun on 29 March.
    expect(decision).toEqual({ action: "wait", nextMs: at("2026-03-29T01:00:00Z") });
  });

  it("runs a start time that has passed, once, even after several were missed", () => {
    const decision = decideRun(input({ nowMs: at("2026-01-04T03:00:30Z") }));
    expect(decision).toEqual({
      action: "run",
      scheduledMs: at("2026-01-04T03:00:00Z"),
      missed: 2,
      nextMs: at("2026-01-05T03:00:00Z"),
    });
  });

  it("skips a start time that is past its starting deadline", () => {
    const decision = decideRun(input({ nowMs: at("2026-01-02T03:10:00Z"), startingDeadlineSeconds: 300 }));
    expect(decision).toMatchObject({
      action: "skip",
      reason: "MissedStartingDeadline",
      scheduledMs: at("2026-01-02T03:00:00Z"),
    });
    const inTime = decideRun(input({ nowMs: at("2026-01-02T03:04:00Z"), startingDeadlineSeconds: 300 }));
    expect(inTime).toMatchObject({ action: "run", scheduledMs: at("2026-01-02T03:00:00Z") });
  });

  it("skips while the previous cycle runs under Forbid and starts another under Allow", () => {
    const due = { nowMs: at("2026-01-02T03:00:05Z"), running: true };
    expect(decideRun(input({ ...due }))).toMatchObject({ action: "skip", reason: "PreviousRunActive" });
    expect(decideRun(input({ ...due, concurrencyPolicy: "Allow" }))).toMatchObject({ action: "run" });
  });

  it("runs a manual request once, even while suspended, and not again after it ran", () => {
    const requestedMs = at("2026-01-01T10:00:00Z");
    expect(decideRun(input({ suspend: true, requestedMs }))).toMatchObject({
      action: "run",
      scheduledMs: requestedMs,
    });
    expect(
      decideRun(input({ requestedMs, lastScheduleMs: requestedMs, lastRunMs: requestedMs })),
    ).toMatchObject({
      action: "wait",
    });
  });

  it("runs a request made in the same second the schedule was created", () => {
    const createdMs = at("2026-01-01T10:00:00Z");
    expect(decideRun(input({ lastScheduleMs: createdMs, requestedMs: createdMs }))).toMatchObject({
      action: "run",
    });
  });

  it("does nothing while suspended", () => {
    expect(decideRun(input({ suspend: true, nowMs: at("2026-01-09T00:00:00Z") }))).toEqual({
      action: "wait",
    });
  });

  it("survives a year of missed minutes without walking them all", () => {
    const decision = decideRun(
      input({
        schedule: "* * * * *",
        lastScheduleMs: at("2025-01-01T00:00:00Z"),
        nowMs: at("2026-01-01T00:00:30Z"),
      }),
    );
    expect(decision).toMatchObject({ action: "run", scheduledMs: at("2026-01-01T00:00:00Z") });
  });

  it("rejects what the CRD pattern lets through but cron cannot mean", () => {
    expect(() => parseSchedule("61 * * * *", "UTC")).toThrow(InvalidScheduleError);
    expect(() => parseSchedule("0 3 * * *", "Mars/Olympus_Mons")).toThrow(InvalidScheduleError);
  });
});
