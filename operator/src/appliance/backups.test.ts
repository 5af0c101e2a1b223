import type { BackupSummary, BackupsResponse } from "@remram/contract";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { type BackupSpec, backupRetryMs, ScheduledBackups } from "./backups.js";

const spec: BackupSpec = {
  volume: { claimName: "usb-disk" },
  schedule: "30 3 * * *",
  timeZone: "UTC",
  keep: 7,
};
const created = Date.parse("2026-11-27T12:00:00Z");

function summary(id: string, completedAt: string): BackupSummary {
  return {
    id,
    takenAt: completedAt,
    completedAt,
    bytes: 4096,
    counts: { knowledge: 40, archivedDocuments: 3, commits: 5 },
    embedding: { model: "all-minilm", dimensions: 384 },
  };
}

/**
 * The schedule with a clock the test moves and a Cortex whose backups it plays: `polls` listings show the backup
 * running, then it is complete (or failed). Sleeping between polls costs nothing.
 */
function harness(
  attachmentsFor?: (namespace: string, name: string) => Promise<{ name: string; contentBase64: string }[]>,
) {
  const requests: unknown[] = [];
  let now = Date.parse("2026-11-28T02:00:00Z");
  const backups: BackupSummary[] = [];
  let running: BackupsResponse["running"];
  let lastFailure: BackupsResponse["lastFailure"];
  let polls = 0;
  let fail: string | undefined;
  let configured = true;
  let unreadable: string | undefined;
  let vanish = false;
  let unreachable = false;
  const started: string[] = [];
  const settled: string[] = [];
  let pending: Promise<void> = Promise.resolve();
  const schedule = new ScheduledBackups({
    cortexFor: async () => ({
      startBackup: async (request) => {
        requests.push(request);
        const id = `backup-${new Date(now).toISOString().replace(/[-:]/g, "").slice(0, 15)}Z-abcdef`;
        started.push(id);
        running = { id, startedAt: new Date(now).toISOString(), phase: "indices", documentsDone: 0 };
        polls = 2;
        return { id, startedAt: running.startedAt };
      },
      backups: async () => {
        if (unreachable) throw new TypeError("fetch failed");
        if (running !== undefined && polls-- <= 0) {
          if (vanish) vanish = false;
          else if (fail === undefined) backups.unshift(summary(running.id, new Date(now).toISOString()));
          else lastFailure = { id: running.id, failedAt: new Date(now).toISOString(), error: fail };
          running = undefined;
        }
        return {
          configured,
          ...(unreadable ? { destinationError: unreadable } : {}),
          ...(running ? { running } : {}),
          ...(lastFailure ? { lastFailure } : {}),
          backups: [...backups],
        };
      },
    }),
    ...(attachmentsFor ? { attachmentsFor } : {}),
    now: () => now,
    sleep: async () => undefined,
    settled: (key) => settled.push(key),
    log: pino({ level: "silent" }),
  });
  const settle = async () => {
    for (let i = 0; i < 50; i++) await pending.then(() => new Promise((resolve) => setImmediate(resolve)));
  };
  return {
    schedule,
    requests,
    started,
    settled,
    failNext: (error: string) => {
      fail = error;
    },
    succeedNext: () => {
      fail = undefined;
    },
    destinationError: (error: string) => {
      unreadable = error;
    },
    vanishNext: () => {
      vanish = true;
    },
    reachable: (value: boolean) => {
      unreachable = !value;
    },
    unconfigured: (value: boolean) => {
      configured = !value;
    },
    kubectlBackup: (id: string) => {
      running = { id, startedAt: new Date(now).toISOString(), phase: "archive", documentsDone: 10 };
      polls = 1;
    },
    at: (iso: string) => {
      now = Date.parse(iso);
    },
    settle,
    keep: (promise: Promise<void>) => {
      pending = promise;
    },
  };
}

describe("scheduled backups", () => {
  it("ask a Cortex that does not answer at the slot again soon, and fail only once it stays away", async () => {
    const h = harness();
    h.reachable(false);
    h.at("2026-11-28T03:30:00Z");
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    // Its pod rolling onto the volume: no failure, asked again in 15 s (the listing it also reads fails quietly).
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    const waiting = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(waiting.condition).toMatchObject({ status: "Unknown", reason: "NoBackupYet" });
    expect(waiting.nextInMs).toBe(15_000);
    h.reachable(true);
    h.at("2026-11-28T03:30:15Z");
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    expect(h.started).toHaveLength(1);
    expect(h.schedule.observe("home", "box", spec, undefined, true, created).condition).toMatchObject({
      status: "True",
    });

    // The next slot finds it away for good: a failure once five minutes have passed.
    h.reachable(false);
    for (const at of ["2026-11-29T03:30:00Z", "2026-11-29T03:32:00Z", "2026-11-29T03:35:00Z"]) {
      h.at(at);
      h.schedule.observe("home", "box", spec, undefined, true, created);
      await h.settle();
    }
    expect(h.schedule.observe("home", "box", spec, undefined, true, created).condition).toMatchObject({
      status: "False",
      reason: "BackupFailed",
      message: expect.stringContaining("fetch failed"),
    });
  });

  it("carry the appliance's sealed Secrets, and fail naming the cause when they cannot be sealed", async () => {
    const sealed = { name: "attachment-appliance-secrets.yaml.age", contentBase64: "c2VhbGVk" };
    let refuse = false;
    const h = harness(async (namespace, name) => {
      expect([namespace, name]).toEqual(["home", "box"]);
      if (refuse) throw new Error("Secrets is forbidden");
      return [sealed];
    });
    h.at("2026-11-28T03:30:00Z");
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    expect(h.requests).toEqual([{ attachments: [sealed] }]);

    refuse = true;
    h.at("2026-11-29T03:30:00Z");
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    expect(h.requests).toHaveLength(1);
    const failed = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(failed.condition).toMatchObject({
      status: "False",
      reason: "BackupFailed",
      message: expect.stringContaining(
        "the appliance's Secrets could not be sealed for the backup: Secrets is forbidden",
      ),
    });
  });

  it("say the household is not backed up without spec.backup", () => {
    const { schedule } = harness();
    expect(schedule.observe("home", "box", undefined, undefined, true, created)).toEqual({
      condition: expect.objectContaining({
        type: "BackedUp",
        status: "False",
        reason: "BackupsNotConfigured",
      }),
    });
  });

  it("wait for the first slot, back up then, and report the newest backup", async () => {
    const h = harness();
    const first = h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    expect(h.started).toEqual([]);
    expect(first.condition).toMatchObject({ status: "Unknown", reason: "NoBackupYet" });
    // Before the slot nothing starts; the next reconcile is at the slot (03:30) at the latest.
    const waiting = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(waiting.nextInMs).toBeLessThanOrEqual(90 * 60_000);

    h.at("2026-11-28T03:30:00Z");
    const due = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(due.nextInMs).toBeUndefined();
    await h.settle();
    expect(h.started).toHaveLength(1);
    expect(h.settled.length).toBeGreaterThanOrEqual(2);
    const done = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(done.status).toMatchObject({
      lastScheduleTime: "2026-11-28T03:30:00Z",
      backups: 1,
      lastSuccessfulBackup: { knowledgeObjects: 40, archivedDocuments: 3, commits: 5, bytes: 4096 },
    });
    expect(done.condition).toMatchObject({ status: "True", reason: "BackupSucceeded" });
    // Nothing more until tomorrow's slot.
    h.at("2026-11-28T09:00:00Z");
    h.schedule.observe("home", "box", spec, done.status && { backup: done.status }, true, created);
    await h.settle();
    expect(h.started).toHaveLength(1);
  });

  it("report a failed backup and try again half an hour later, before the next slot", async () => {
    const h = harness();
    h.at("2026-11-28T03:31:00Z");
    h.failNext("the backup volume is full (ENOSPC)");
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    const failed = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(failed.condition).toMatchObject({ status: "False", reason: "BackupFailed" });
    expect(failed.condition.message).toContain("ENOSPC");
    expect(failed.nextInMs).toBeLessThanOrEqual(backupRetryMs);
    h.succeedNext();
    h.at(new Date(Date.parse("2026-11-28T03:31:00Z") + backupRetryMs).toISOString());
    h.schedule.observe("home", "box", spec, failed.status && { backup: failed.status }, true, created);
    await h.settle();
    expect(h.started).toHaveLength(2);
    const recovered = h.schedule.observe(
      "home",
      "box",
      spec,
      failed.status && { backup: failed.status },
      true,
      created,
    );
    expect(recovered.condition).toMatchObject({ status: "True", reason: "BackupSucceeded" });
  });

  it("after a restart, take the last slot from status and start nothing early", async () => {
    const h = harness();
    h.at("2026-11-28T09:00:00Z");
    const previous = { lastScheduleTime: "2026-11-28T03:30:00Z", backups: 3 };
    h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    await h.settle();
    expect(h.started).toEqual([]);
    // Once the listing is read, the next reconcile comes at the listing's refresh, not in a tight loop.
    const observed = h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    expect(observed.nextInMs).toBe(10 * 60_000);
  });

  it("start a due slot only once Cortex is available", async () => {
    const h = harness();
    h.at("2026-11-28T04:00:00Z");
    const previous = { lastScheduleTime: "2026-11-27T03:30:00Z", backups: 3 };
    h.schedule.observe("home", "box", spec, { backup: previous }, false, created);
    await h.settle();
    expect(h.started).toEqual([]);
    h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    await h.settle();
    expect(h.started).toHaveLength(1);
  });

  it("after a restart, retry a failed slot held in status half an hour after the failure", async () => {
    const h = harness();
    const previous = {
      lastScheduleTime: "2026-11-28T03:30:00Z",
      backups: 1,
      lastFailure: { time: "2026-11-28T03:31:00Z", message: "no space left" },
    };
    h.at("2026-11-28T03:45:00Z");
    h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    await h.settle();
    expect(h.started).toEqual([]);
    const waiting = h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    expect(waiting.nextInMs).toBe(10 * 60_000);
    expect(waiting.condition).toMatchObject({ status: "False", reason: "BackupFailed" });
    h.at("2026-11-28T04:01:00Z");
    h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    await h.settle();
    expect(h.started).toHaveLength(1);
  });

  it("keep what status knew when the destination cannot be read, and fail the slot with its reason", async () => {
    const h = harness();
    h.at("2026-11-28T09:00:00Z");
    const previous = {
      lastScheduleTime: "2026-11-28T03:30:00Z",
      backups: 2,
      lastSuccessfulBackup: {
        id: "backup-20261128T033000Z-abcdef",
        completedAt: "2026-11-28T03:31:00Z",
        bytes: 10,
        knowledgeObjects: 4,
        archivedDocuments: 0,
        commits: 1,
      },
    };
    h.destinationError("s3 bucket household refused ListObjectsV2: AccessDenied (HTTP 403)");
    h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    await h.settle();
    const kept = h.schedule.observe("home", "box", spec, { backup: previous }, true, created);
    expect(kept.status).toMatchObject({
      backups: 2,
      lastSuccessfulBackup: { id: "backup-20261128T033000Z-abcdef" },
    });
    // The next slot cannot run either: a failure naming the reason.
    h.at("2026-11-29T03:30:00Z");
    h.schedule.observe("home", "box", spec, kept.status && { backup: kept.status }, true, created);
    await h.settle();
    const failed = h.schedule.observe(
      "home",
      "box",
      spec,
      kept.status && { backup: kept.status },
      true,
      created,
    );
    expect(failed.condition).toMatchObject({ status: "False", reason: "BackupFailed" });
    expect(failed.condition.message).toContain("(HTTP 403)");
    expect(h.started).toEqual([]);
  });

  it("count a backup that vanished without completing (Cortex restarted) as failed", async () => {
    const h = harness();
    h.at("2026-11-28T03:30:00Z");
    h.vanishNext();
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    const failed = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(h.started).toHaveLength(1);
    expect(failed.condition).toMatchObject({ status: "False", reason: "BackupFailed" });
    expect(failed.condition.message).toContain("ended without completing");
  });

  it("wait without a failure while Cortex has not mounted the backup volume yet (spec.backup just set)", async () => {
    const h = harness();
    h.at("2026-11-28T03:30:00Z");
    h.unconfigured(true);
    const first = h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    expect(h.started).toEqual([]);
    const waiting = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(waiting.condition).toMatchObject({ status: "Unknown", reason: "NoBackupYet" });
    expect(waiting.nextInMs).toBe(15_000);
    expect(first.condition.reason).not.toBe("BackupFailed");
    h.unconfigured(false);
    h.at("2026-11-28T03:30:15Z");
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    expect(h.started).toHaveLength(1);
  });

  it("follow a backup `kubectl remram backup` started instead of starting a second one", async () => {
    const h = harness();
    h.at("2026-11-28T03:30:00Z");
    h.kubectlBackup("backup-20261128T032900Z-123456");
    h.schedule.observe("home", "box", spec, undefined, true, created);
    await h.settle();
    expect(h.started).toEqual([]);
    const done = h.schedule.observe("home", "box", spec, undefined, true, created);
    expect(done.status?.lastSuccessfulBackup?.id).toBe("backup-20261128T032900Z-123456");
  });
});
