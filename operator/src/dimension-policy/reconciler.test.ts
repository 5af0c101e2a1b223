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

/** Two policies for appliance box (made before names were tied to appliances), a Cortex that records its PUTs. */
function twoPolicies(deleting?: "household") {
  const policy = (name: string, created: string): DimensionPolicyObject => ({
    apiVersion: "remram.io/v1alpha1",
    kind: "DimensionPolicy",
    metadata: {
      name,
      namespace: "home",
      generation: 1,
      creationTimestamp: created,
      finalizers: [dimensionFinalizer],
      ...(deleting === name ? { deletionTimestamp: "2026-01-02T00:00:00Z" } : {}),
    },
    spec: { applianceRef: { name: "box" }, dimensions: [{ name }] },
    status: { observedGeneration: 1, appliedHash: `sha256:${"1".repeat(64)}` },
  });
  const policies = [policy("household", "2025-06-01T00:00:00Z"), policy("box", "2026-01-01T00:00:00Z")];
  const puts: unknown[] = [];
  const statuses: Record<string, { conditions: Condition[]; appliedHash?: string }> = {};
  const patches: string[] = [];
  const events: { reason: string; note: string }[] = [];
  const client = {
    applyStatus: async (object: KubeObject & { status: { conditions: Condition[] } }) => {
      statuses[object.metadata.name] = object.status;
    },
    jsonPatch: async (path: string) => {
      patches.push(path);
    },
  } as unknown as KubeClient;
  const cortex = {
    clientFor: async () => ({
      putDimensions: async (body: unknown) => {
        puts.push(body);
        return { appliedHash: `sha256:${"2".repeat(64)}` };
      },
      currentHash: async () => undefined,
    }),
  } as unknown as CortexDirectory;
  const reconciler = new DimensionPolicyReconciler({
    client,
    policies: {
      get: (_namespace, name) => policies.find((each) => each.metadata.name === name),
      list: () => policies,
    },
    cortex,
    events: {
      record: async (_object: KubeObject, event: { reason: string; note: string }) => {
        events.push(event);
      },
    } as unknown as EventRecorder,
    now: () => Date.parse("2026-01-03T00:00:00Z"),
    log: pino({ level: "silent" }),
  });
  return { reconciler, puts, statuses, patches, events };
}

describe("a second DimensionPolicy for one appliance", () => {
  it("is refused with DuplicatePolicy and an Event naming the policy in force, and never reaches Cortex", async () => {
    const { reconciler, puts, statuses, events } = twoPolicies();
    await reconciler.reconcile("home/household");
    expect(puts).toEqual([]);
    const synced = statuses.household?.conditions.find((condition) => condition.type === "Synced");
    expect(synced).toMatchObject({ status: "False", reason: "DuplicatePolicy" });
    expect(synced?.message).toContain("takes its policy from DimensionPolicy box");
    // Cortex no longer holds what it sent: no hash claims otherwise.
    expect(statuses.household?.appliedHash).toBeUndefined();
    expect(events).toEqual([expect.objectContaining({ reason: "DuplicatePolicy" })]);
  });

  it("leaves the policy named after the appliance in force", async () => {
    const { reconciler, puts, statuses } = twoPolicies();
    await reconciler.reconcile("home/box");
    expect(puts).toEqual([expect.objectContaining({ dimensions: [{ name: "box" }] })]);
    expect(statuses.box?.conditions.find((condition) => condition.type === "Synced")?.status).toBe("True");
  });

  it("goes away without resetting Cortex, which holds the other policy", async () => {
    const { reconciler, puts, patches } = twoPolicies("household");
    await reconciler.reconcile("home/household");
    expect(puts).toEqual([]);
    expect(patches).toEqual(["/apis/remram.io/v1alpha1/namespaces/home/dimensionpolicies/household"]);
  });
});
