import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube-client.js";
import { dimensionFinalizer, policyHolder, siblingKeys } from "./holder.js";

const policy = (
  name: string,
  appliance: string,
  created: string,
  metadata: Partial<KubeObject["metadata"]> = {},
): KubeObject & { spec: unknown } => ({
  apiVersion: "remram.io/v1alpha1",
  kind: "DimensionPolicy",
  metadata: { name, namespace: "home", creationTimestamp: created, ...metadata },
  spec: { applianceRef: { name: appliance }, dimensions: [{ name: "topic" }] },
});

describe("the policy an appliance's Cortex takes", () => {
  it("is the one named after the appliance, even when an older one exists", () => {
    const older = policy("household", "box", "2025-01-01T00:00:00Z");
    const named = policy("box", "box", "2026-01-01T00:00:00Z");
    expect(policyHolder([older, named], "box")?.metadata.name).toBe("box");
  });

  it("is otherwise the oldest, then the first by name, whatever the order of the cache", () => {
    const a = policy("a", "box", "2026-01-02T00:00:00Z");
    const b = policy("b", "box", "2026-01-01T00:00:00Z");
    const c = policy("c", "box", "2026-01-01T00:00:00Z");
    expect(policyHolder([a, c, b], "box")?.metadata.name).toBe("b");
    expect(policyHolder([c, b, a], "box")?.metadata.name).toBe("b");
  });

  it("stays with a policy being deleted until its finalizer has reset Cortex", () => {
    const leaving = policy("box", "box", "2026-01-01T00:00:00Z", {
      deletionTimestamp: "2026-02-01T00:00:00Z",
      finalizers: [dimensionFinalizer],
    });
    const next = policy("household", "box", "2025-01-01T00:00:00Z");
    expect(policyHolder([leaving, next], "box")?.metadata.name).toBe("box");
    const { finalizers: _finalizers, ...released } = leaving.metadata;
    expect(policyHolder([{ ...leaving, metadata: released }, next], "box")?.metadata.name).toBe("household");
  });

  it("ignores other appliances' policies and specs that do not parse", () => {
    const other = policy("lab", "lab", "2025-01-01T00:00:00Z");
    const broken = { ...policy("broken", "box", "2024-01-01T00:00:00Z"), spec: { applianceRef: {} } };
    expect(policyHolder([other, broken], "box")).toBeUndefined();
    expect(siblingKeys(policy("x", "box", "2026-01-01T00:00:00Z"), [other, broken])).toEqual([]);
  });

  it("wakes the other policies of the same appliance when one changes", () => {
    const all = [
      policy("box", "box", "2026-01-01T00:00:00Z"),
      policy("household", "box", "2025-01-01T00:00:00Z"),
      policy("lab", "lab", "2025-01-01T00:00:00Z"),
    ];
    expect(siblingKeys(all[0] as KubeObject, all)).toEqual(["home/household"]);
  });
});
