import { describe, expect, it } from "vitest";
import { OperatorMetrics } from "./metrics.js";

const series = async (metrics: OperatorMetrics, name: string) =>
  (await metrics.registry.getMetricsAsJSON())
    .find((metric) => metric.name === name)
    ?.values.map((value) => ({ labels: value.labels, value: value.value })) ?? [];

describe("an appliance's conditions as gauges", () => {
  it("sets one series per condition type and drops them when the appliance goes", async () => {
    const metrics = new OperatorMetrics();
    metrics.setApplianceConditions("home", "box", [
      { type: "Ready", status: "True" },
      { type: "CortexReady", status: "False" },
    ]);
    expect(await series(metrics, "remram_appliance_condition")).toEqual([
      { labels: { namespace: "home", appliance: "box", type: "Ready" }, value: 1 },
      { labels: { namespace: "home", appliance: "box", type: "CortexReady" }, value: 0 },
    ]);
    metrics.setApplianceConditions("home", "box", undefined);
    expect(await series(metrics, "remram_appliance_condition")).toEqual([]);
  });

  it("flags a missing backup destination by BackedUp's reason, not by its status alone", async () => {
    const metrics = new OperatorMetrics();
    const backedUp = (status: string, reason: string) => [{ type: "BackedUp", status, reason }];
    const missing = async () =>
      (await series(metrics, "remram_appliance_backup_destination_missing")).map((s) => s.value);
    metrics.setApplianceConditions("home", "box", backedUp("False", "BackupDestinationMissing"));
    expect(await missing()).toEqual([1]);
    // Failed or not configured are other alerts' business (or none).
    metrics.setApplianceConditions("home", "box", backedUp("False", "BackupFailed"));
    expect(await missing()).toEqual([0]);
    metrics.setApplianceConditions("home", "box", backedUp("False", "BackupsNotConfigured"));
    expect(await missing()).toEqual([0]);
    metrics.setApplianceConditions("home", "box", [{ type: "Ready", status: "True" }]);
    expect(await missing()).toEqual([]);
  });
});
