import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { DreamScheduleStatus } from "../api/v1alpha1/dream-schedule.js";
import type { CortexDirectory } from "../cortex/directory.js";
import type { Cache } from "../runtime/cache.js";
import type { EventRecorder } from "../runtime/events.js";
import type { KubeClient, KubeObject } from "../runtime/kube-client.js";
import { DreamScheduleReconciler } from "./reconciler.js";
import { dreamRequestAnnotation } from "./request-annotation.js";

type Schedule = KubeObject & { spec: Record<string, unknown>; status?: DreamScheduleStatus };

const now = Date.parse("2026-11-27T17:38:46Z");
const key = "home/nightly";

function harness() {
  let cached: Schedule = {
    apiVersion: "remram.io/v1alpha1",
    kind: "DreamSchedule",
    metadata: {
      name: "nightly",
      namespace: "home",
      generation: 1,
      creationTimestamp: "2026-11-27T10:00:00Z",
      annotations: { [dreamRequestAnnotation]: "2026-11-27T17:38:45Z" },
    },
    spec: {
      applianceRef: { name: "moltbox" },
      schedule: "0 3 * * *",
      timeZone: "Europe/Oslo",
      cycle: { mirrorProposals: false },
    },
  };
  const written: DreamScheduleStatus[] = [];
  let finished: () => void = () => undefined;
  const cycleDone = new Promise<void>((resolve) => {
    finished = resolve;
  });
  const reconciler = new DreamScheduleReconciler({
    client: {
      applyStatus: async (object: KubeObject & { status: DreamScheduleStatus }) => {
        written.push(object.status);
        return object;
      },
    } as unknown as KubeClient,
    schedules: { get: () => cached, list: () => [cached] } as unknown as Cache<Schedule>,
    proposals: { get: () => undefined, list: () => [] } as unknown as Cache<KubeObject>,
    cortex: {
      clientFor: async () => ({
        dream: async () => ({ counts: { objectsScanned: 1 } }),
      }),
    } as unknown as CortexDirectory,
    events: { record: async () => undefined } as unknown as EventRecorder,
    operatorUsername: () => "system:serviceaccount:remram-system:remram-operator",
    now: () => now,
    enqueue: () => finished(),
    log: pino({ level: "silent" }),
  });
  return {
    reconciler,
    written,
    cycleDone,
    /** What the informer shows next: a status the operator wrote, possibly an older one. */
    show: (status: DreamScheduleStatus | undefined) => {
      cached = { ...cached, ...(status === undefined ? {} : { status }) };
    },
  };
}

describe("a DreamSchedule whose cycle ends before the cache shows it running", () => {
  it("records the cycle's outcome once and never calls it interrupted from the stale Running status", async () => {
    const { reconciler, written, cycleDone, show } = harness();
    await reconciler.reconcile(key);
    const running = written.at(-1);
    expect(running?.lastRun).toMatchObject({ outcome: "Running" });
    await cycleDone;
    // The cycle ended; the cache still holds the status from before the run started.
    await reconciler.reconcile(key);
    const succeeded = written.at(-1);
    expect(succeeded?.lastRun).toMatchObject({ outcome: "Succeeded", counts: { objectsScanned: 1 } });
    expect(succeeded?.lastScheduleTime).toBe(running?.lastScheduleTime);
    // Now the cache catches up with the first write, which said Running.
    show(running);
    const before = written.length;
    await reconciler.reconcile(key);
    expect(written.slice(before).map((status) => status.lastRun?.outcome)).not.toContain("Failed");
    show(succeeded);
    await reconciler.reconcile(key);
    expect(written.at(-1)?.lastRun?.outcome).toBe("Succeeded");
  });
});
