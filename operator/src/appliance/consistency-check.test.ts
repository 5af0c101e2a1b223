import type { ConsistencyReport } from "@remram/contract";
import pino from "pino";
import { describe, expect, it } from "vitest";
import {
  ConsistencyChecks,
  type ConsistencyStatus,
  consistencyStatus,
  retryAfterFailureMs,
} from "./consistency-check.js";

const hour = 3_600_000;

function report(checkedAt: string, findings: ConsistencyReport["findings"] = []): ConsistencyReport {
  const byKind: ConsistencyReport["byKind"] = {};
  for (const finding of findings) byKind[finding.kind] = (byKind[finding.kind] ?? 0) + 1;
  return {
    checkedAt,
    durationMs: 1234,
    consistent: findings.length === 0,
    counts: {
      knowledge: 40,
      vectors: 38,
      awaitingVector: 2,
      chunks: 12,
      archivedDocuments: 3,
      proposals: 2,
      commits: 5,
    },
    byKind,
    findings,
  };
}

/** The checks with a clock the test moves and a Cortex it answers for; `settled` collects the requeued keys. */
function harness(intervalMs = 6 * hour) {
  let now = Date.parse("2026-11-28T10:00:00Z");
  const answers: (() => Promise<ConsistencyReport>)[] = [];
  const asked: string[] = [];
  const settled: string[] = [];
  const checks = new ConsistencyChecks({
    run: async (namespace, name) => {
      asked.push(`${namespace}/${name}`);
      const answer = answers.shift();
      if (answer === undefined) throw new Error("the test gave no answer");
      return answer();
    },
    intervalMs,
    now: () => now,
    settled: (key) => settled.push(key),
    log: pino({ level: "silent" }),
  });
  return {
    checks,
    asked,
    settled,
    answer: (make: () => Promise<ConsistencyReport>) => answers.push(make),
    at: () => new Date(now).toISOString(),
    advance: (ms: number) => {
      now += ms;
    },
  };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe("ConsistencyChecks", () => {
  it("waits for Cortex, checks in the background, then reports and schedules the next check", async () => {
    const h = harness();
    const before = h.checks.observe("home", "box", {}, false);
    expect(before.condition).toMatchObject({ status: "Unknown", reason: "NotCheckedYet" });
    expect(h.asked).toEqual([]);
    expect(before.nextInMs).toBeUndefined();

    h.answer(async () => report(h.at()));
    const started = h.checks.observe("home", "box", {}, true);
    expect(h.asked).toEqual(["home/box"]);
    expect(started.nextInMs, "a running check requeues when it settles").toBeUndefined();
    await settle();
    expect(h.settled).toEqual(["home/box"]);

    h.advance(1000);
    const done = h.checks.observe("home", "box", {}, true);
    expect(done.condition).toMatchObject({ status: "True", reason: "ChecksPassed" });
    expect(done.status).toMatchObject({ consistent: true, findings: 0, knowledgeObjects: 40, commits: 5 });
    expect(done.nextInMs).toBe(6 * hour - 1000);
    expect(h.asked).toHaveLength(1);

    h.advance(6 * hour);
    h.answer(async () => report(h.at()));
    h.checks.observe("home", "box", { consistency: done.status }, true);
    expect(h.asked).toHaveLength(2);
  });

  it("reports findings as DataConsistent=False with counts by kind and the first findings by id", async () => {
    const h = harness();
    const findings = [
      { kind: "vector-without-object", id: "k1", detail: "no knowledge object has this id" },
      { kind: "vector-without-object", id: "k2", detail: "no knowledge object has this id" },
      { kind: "archive-document-corrupt", id: "ab12", detail: "hash mismatch" },
    ] as const;
    h.answer(async () => report(h.at(), [...findings]));
    h.checks.observe("home", "box", {}, true);
    await settle();
    const observed = h.checks.observe("home", "box", {}, true);
    expect(observed.status).toMatchObject({
      consistent: false,
      findings: 3,
      byKind: [
        { kind: "archive-document-corrupt", count: 1 },
        { kind: "vector-without-object", count: 2 },
      ],
      examples: [
        "vector-without-object k1: no knowledge object has this id",
        "vector-without-object k2: no knowledge object has this id",
        "archive-document-corrupt ab12: hash mismatch",
      ],
    });
    expect(observed.condition).toMatchObject({ status: "False", reason: "FindingsReported" });
    expect(observed.condition.message).toContain(
      "3 findings (1 archive-document-corrupt, 2 vector-without-object)",
    );
  });

  it("retries a failed check a minute later, keeping the last outcome it had", async () => {
    const h = harness();
    const previous: ConsistencyStatus = consistencyStatus(report("2026-11-28T01:00:00Z"));
    h.answer(async () => {
      throw new Error("POST /admin/check answered 503");
    });
    h.checks.observe("home", "box", { consistency: previous }, true);
    await settle();
    const failed = h.checks.observe("home", "box", { consistency: previous }, true);
    expect(failed.status).toEqual(previous);
    expect(failed.condition).toMatchObject({ status: "True", reason: "ChecksPassed" });
    expect(failed.nextInMs).toBe(retryAfterFailureMs);
    h.advance(retryAfterFailureMs - 1);
    h.checks.observe("home", "box", { consistency: previous }, true);
    expect(h.asked).toHaveLength(1);

    const fresh = harness();
    fresh.answer(async () => {
      throw new Error("Cortex credential Secret box-cortex-operator is not there yet");
    });
    fresh.checks.observe("home", "box", {}, true);
    await settle();
    expect(fresh.checks.observe("home", "box", {}, true).condition).toMatchObject({
      status: "Unknown",
      reason: "CheckFailed",
      message: expect.stringContaining("is not there yet"),
    });
  });

  it("takes the last check from status after a restart instead of checking again early", () => {
    const h = harness();
    const lastCheck = new Date(Date.parse(h.at()) - hour).toISOString();
    const observed = h.checks.observe(
      "home",
      "box",
      { consistency: consistencyStatus(report(lastCheck)) },
      true,
    );
    expect(h.asked).toEqual([]);
    expect(observed.nextInMs).toBe(5 * hour);
  });

  it("keeps the condition status holds while a new leader's first check runs, so it writes nothing new", () => {
    const h = harness();
    h.answer(() => new Promise(() => undefined));
    const failed = {
      type: "DataConsistent",
      status: "Unknown" as const,
      reason: "CheckFailed",
      message: "the consistency check could not run: POST /admin/check: fetch failed",
    };
    const held = { ...failed, lastTransitionTime: "2026-11-28T09:00:00Z", observedGeneration: 1 };
    const observed = h.checks.observe("home", "box", { conditions: [held] }, true);
    expect(h.asked).toHaveLength(1);
    expect(observed.condition).toEqual(failed);
  });

  it("does not requeue an appliance deleted while its check ran", async () => {
    const h = harness();
    let finish: (value: ConsistencyReport) => void = () => undefined;
    h.answer(() => new Promise((resolve) => (finish = resolve)));
    h.checks.observe("home", "box", {}, true);
    h.checks.forget("home", "box");
    finish(report(h.at()));
    await settle();
    expect(h.settled).toEqual([]);
  });
});
