import { pino } from "pino";
import { describe, expect, it } from "vitest";
import type { Condition } from "../api/v1alpha1/common.js";
import { CortexRejectedError, CortexUnavailableError } from "../cortex/client.js";
import type { CortexDirectory } from "../cortex/directory.js";
import type { EventRecorder } from "../runtime/events.js";
import type { KubeClient, KubeObject } from "../runtime/kube-client.js";
import { TerminalError } from "../runtime/terminal-error.js";
import { type DimensionPolicyObject, DimensionPolicyReconciler, dimensionFinalizer } from "./reconciler.js";

/** A reconciler whose Cortex answers every PUT /dimensions with `refusal`; returns it and the statuses written. */
function reconcilerRefusedWith(refusal: Error) {
  const policy: DimensionPolicyObject = {
    apiVersion: "remram.io/v1alpha1",
    kind: "DimensionPolicy",
    metadata: { name: "policy", namespace: "home", generation: 1, finalizers: [dimensionFinalizer] },
    spec: { applianceRef: { name: "box" }, dimensions: [{ name: "topic" }] },
  };
  const statuses: { conditions: Condition[] }[] = [];
  const client = {
    applyStatus: async (object: KubeObject & { status: { conditions: Condition[] } }) => {
      statuses.push(object.status);
    },
  } as unknown as KubeClient;
  const cortex = {
    clientFor: async () => ({
      putDimensions: async () => {
        throw refusal;
      },
    }),
  } as unknown as CortexDirectory;
  const reconciler = new DimensionPolicyReconciler({
    client,
    policies: { get: () => policy, list: () => [policy] },
    cortex,
    events: { record: async () => {} } as unknown as EventRecorder,
    now: () => Date.parse("2026-01-01T00:00:00Z"),
    log: pino({ level: "silent" }),
  });
  return { reconciler, statuses };
}

describe("a dimension policy Cortex does not take", () => {
  it("is Synced=False (Rejected) and a TerminalError when Cortex calls it invalid", async () => {
    const { reconciler, statuses } = reconcilerRefusedWith(
      new CortexRejectedError(400, "PUT /dimensions answered 400: body/weights must sum to 1"),
    );
    await expect(reconciler.reconcile("home/policy")).rejects.toBeInstanceOf(TerminalError);
    expect(statuses[0]?.conditions.find((condition) => condition.type === "Synced")).toMatchObject({
      status: "False",
      reason: "Rejected",
    });
  });

  it.each([
    ["Cortex is down", new CortexUnavailableError("PUT /dimensions answered 503"), "CortexUnavailable"],
    ["the token is wrong", new CortexRejectedError(401, "PUT /dimensions answered 401"), "Rejected"],
  ])("is retried with backoff when %s", async (_case, refusal, reason) => {
    const { reconciler, statuses } = reconcilerRefusedWith(refusal);
    const failure = await reconciler.reconcile("home/policy").catch((error: unknown) => error);
    expect(failure).toBe(refusal);
    expect(failure).not.toBeInstanceOf(TerminalError);
    expect(statuses[0]?.conditions.find((condition) => condition.type === "Synced")?.reason).toBe(reason);
  });
});
