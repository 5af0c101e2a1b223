import { setTimeout as sleep } from "node:timers/promises";
import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { isSubset } from "./apply.js";
import { Controller } from "./controller.js";
import { withTypeMeta } from "./informer.js";
import { decideLease, microTime, nextLeaseSpec } from "./leader-election.js";
import { OperatorMetrics } from "./metrics.js";
import { controllerOwnerKey } from "./owner.js";
import { TerminalError } from "./terminal-error.js";

const log = pino({ level: "silent" });

describe("a controller", () => {
  it("coalesces 100 rapid updates of one object into at most two reconciles", async () => {
    const reconciled: string[] = [];
    const controller = new Controller({
      name: "test",
      log,
      listKeys: () => [],
      reconcile: async (key) => {
        reconciled.push(key);
        await sleep(20);
        return undefined;
      },
    });
    controller.start();
    for (let i = 0; i < 100; i++) controller.enqueue("ns/a");
    await sleep(100);
    await controller.stop();
    expect(reconciled.length).toBeGreaterThanOrEqual(1);
    expect(reconciled.length).toBeLessThanOrEqual(2);
  });

  it("never reconciles one key on two workers at once, while different keys run in parallel", async () => {
    const running = new Set<string>();
    let overlaps = 0;
    let maxParallel = 0;
    const controller = new Controller({
      name: "test",
      log,
      workers: 4,
      listKeys: () => [],
      reconcile: async (key) => {
        if (running.has(key)) overlaps++;
        running.add(key);
        maxParallel = Math.max(maxParallel, running.size);
        await sleep(5);
        running.delete(key);
        return undefined;
      },
    });
    controller.start();
    for (let round = 0; round < 20; round++) {
      for (const key of ["ns/a", "ns/b", "ns/c"]) controller.enqueue(key);
      await sleep(2);
    }
    await sleep(50);
    await controller.stop();
    expect(overlaps).toBe(0);
    expect(maxParallel).toBeGreaterThan(1);
  });

  it("counts results under controller-runtime's metric names", async () => {
    const metrics = new OperatorMetrics();
    let calls = 0;
    const controller = new Controller({
      name: "appliance",
      log,
      metrics,
      listKeys: () => [],
      queue: { backoff: { baseDelayMs: 1, maxDelayMs: 1 } },
      reconcile: async () => {
        calls++;
        if (calls === 1) throw new Error("first attempt fails");
        return undefined;
      },
    });
    controller.start();
    controller.enqueue("ns/a");
    await sleep(50);
    await controller.stop();
    const text = await metrics.registry.metrics();
    expect(text).toContain('controller_runtime_reconcile_total{controller="appliance",result="error"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="appliance",result="success"} 1');
    expect(text).toContain('workqueue_retries_total{name="appliance"} 1');
  });

  it("records a TerminalError without a retry and reconciles the key again on its next event", async () => {
    const metrics = new OperatorMetrics();
    const lines: string[] = [];
    const warnLog = pino({ level: "warn" }, { write: (line: string) => lines.push(line) });
    let calls = 0;
    const controller = new Controller({
      name: "policy",
      log: warnLog,
      metrics,
      listKeys: () => [],
      queue: { backoff: { baseDelayMs: 1, maxDelayMs: 1 } },
      reconcile: async () => {
        calls++;
        if (calls === 1) throw new TerminalError("spec does not parse");
        return undefined;
      },
    });
    controller.start();
    controller.enqueue("ns/a");
    await sleep(50);
    expect(calls).toBe(1);
    expect(controller.queue.numRequeues("ns/a")).toBe(0);
    expect(lines.map((line) => JSON.parse(line))).toEqual([
      expect.objectContaining({
        level: 40,
        key: "ns/a",
        err: expect.objectContaining({ type: "TerminalError" }),
      }),
    ]);
    controller.enqueue("ns/a");
    await sleep(50);
    await controller.stop();
    expect(calls).toBe(2);
    const text = await metrics.registry.metrics();
    expect(text).toContain('controller_runtime_terminal_reconcile_errors_total{controller="policy"} 1');
    expect(text).toContain('controller_runtime_reconcile_errors_total{controller="policy"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="policy",result="success"} 1');
    expect(text).not.toContain('workqueue_retries_total{name="policy"}');
  });

  it("forgets the backoff of earlier failures once a TerminalError ends them", async () => {
    let calls = 0;
    const controller = new Controller({
      name: "test",
      log,
      listKeys: () => [],
      queue: { backoff: { baseDelayMs: 1, maxDelayMs: 1 } },
      reconcile: async () => {
        calls++;
        throw calls === 1 ? new Error("Cortex is down") : new TerminalError("Cortex refused the policy");
      },
    });
    controller.start();
    controller.enqueue("ns/a");
    await sleep(50);
    await controller.stop();
    expect(calls).toBe(2);
    expect(controller.queue.numRequeues("ns/a")).toBe(0);
  });
});

describe("lease decisions", () => {
  const now = Date.parse("2026-01-01T00:00:30Z");

  it("renews its own lease, waits on a live foreign one and takes an expired or released one", () => {
    const live = { holderIdentity: "pod-b", leaseDurationSeconds: 15, renewTime: microTime(now - 5_000) };
    const expired = { ...live, renewTime: microTime(now - 16_000) };
    expect(decideLease({ ...live, holderIdentity: "pod-a" }, "pod-a", now)).toBe("renew");
    expect(decideLease(live, "pod-a", now)).toBe("wait");
    expect(decideLease(expired, "pod-a", now)).toBe("take");
    expect(decideLease({ ...live, holderIdentity: "" }, "pod-a", now)).toBe("take");
    expect(decideLease(undefined, "pod-a", now)).toBe("take");
  });

  it("counts a transition only when the lease changes hands", () => {
    const config = { leaseDurationMs: 15_000, renewDeadlineMs: 10_000, retryPeriodMs: 2_000 };
    const taken = nextLeaseSpec({ holderIdentity: "pod-b", leaseTransitions: 3 }, "pod-a", now, config);
    expect(taken).toMatchObject({ holderIdentity: "pod-a", leaseTransitions: 4, leaseDurationSeconds: 15 });
    const renewed = nextLeaseSpec(taken, "pod-a", now + 2_000, config);
    expect(renewed.leaseTransitions).toBe(4);
    expect(renewed.acquireTime).toBe(taken.acquireTime);
    expect(renewed.renewTime).toBe("2026-01-01T00:00:32.000000Z");
  });
});

describe("the informer's list", () => {
  it("gives listed items the apiVersion and kind that only watch events carry", () => {
    const items = withTypeMeta({
      apiVersion: "apps/v1",
      kind: "DeploymentList",
      metadata: {},
      items: [{ metadata: { name: "a" } }],
    });
    expect(items).toEqual([{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "a" } }]);
  });
});

describe("apply decisions and owner mapping", () => {
  it("treats a live object carrying every desired field as converged, whatever the server added", () => {
    const desired = { spec: { replicas: 1, template: { containers: [{ name: "c", image: "x" }] } } };
    const live = {
      spec: {
        replicas: 1,
        revisionHistoryLimit: 10,
        template: { containers: [{ name: "c", image: "x", imagePullPolicy: "IfNotPresent" }] },
      },
    };
    expect(isSubset(desired, live)).toBe(true);
    expect(isSubset({ spec: { replicas: 2 } }, live)).toBe(false);
    expect(isSubset({ spec: { template: { containers: [] } } }, live)).toBe(false);
  });

  it("maps a child back to its controlling owner of the right kind only", () => {
    const child = {
      metadata: {
        namespace: "home",
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "ReplicaSet", name: "rs", uid: "1" },
          {
            apiVersion: "remram.io/v1alpha1",
            kind: "RemramAppliance",
            name: "box",
            uid: "2",
            controller: true,
          },
        ],
      },
    };
    expect(controllerOwnerKey(child, "remram.io/v1alpha1", "RemramAppliance")).toBe("home/box");
    expect(controllerOwnerKey(child, "remram.io/v1alpha1", "DreamSchedule")).toBeUndefined();
  });
});
