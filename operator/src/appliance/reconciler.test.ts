import { pino } from "pino";
import { describe, expect, it } from "vitest";
import { TerminalError } from "../runtime/terminal-error.js";
import { ApplianceReconciler, type ApplianceReconcilerDeps, type RemramAppliance } from "./reconciler.js";
import { images, profiles } from "./testing/context.js";

/** A reconciler over one appliance "box" in "home" with this spec, no nodes and no RuntimeClass. */
function reconcilerFor(spec: unknown, installed = profiles) {
  const appliance: RemramAppliance = {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace: "home", uid: "u-1", generation: 1 },
    spec,
  };
  return new ApplianceReconciler({
    appliances: { get: () => appliance, list: () => [appliance] },
    nodes: { get: () => undefined, list: () => [] },
    runtimeClasses: { get: () => undefined, list: () => [] },
    profiles: installed,
    images,
    operatorNamespace: "remram-system",
    now: () => Date.parse("2026-01-01T00:00:00Z"),
    log: pino({ level: "silent" }),
  } as unknown as ApplianceReconcilerDeps);
}

describe("an appliance only a spec change can fix", () => {
  it("is a TerminalError when its spec does not parse", async () => {
    const reconcile = reconcilerFor({ hardwareProfile: "huge" }).reconcile("home/box");
    await expect(reconcile).rejects.toBeInstanceOf(TerminalError);
    await expect(reconcile).rejects.toThrow(/^spec does not parse: .*hardwareProfile/s);
  });

  it("is a TerminalError when it names a hardware profile the operator has not installed", async () => {
    await expect(
      reconcilerFor({ hardwareProfile: "large-gpu" }, new Map()).reconcile("home/box"),
    ).rejects.toThrow(new TerminalError("hardware profile large-gpu is not installed"));
  });
});
