import { describe, expect, it } from "vitest";
import { appResources } from "./children/app.js";
import { gpuInventory, type NodeLike, quantityToMiB, selectProfile } from "./hardware-profiles.js";
import { profiles } from "./testing/context.js";

describe("hardware profiles", () => {
  it("ship the baseline, CPU-only and large-GPU profiles", () => {
    expect([...profiles.keys()].sort()).toEqual(["cpu-only", "large-gpu", "moltbox-baseline"]);
  });

  // The smallest box each profile is meant for (its description); requests beyond 70 % of it would leave k3s's own
  // pods unschedulable, and the appliance Pending on exactly the boxes the profile names.
  it.each([
    ["cpu-only", 2],
    ["moltbox-baseline", 12],
    ["large-gpu", 16],
  ] as const)("%s requests at most 70 %% of a %i-core box's CPU", (name, cores) => {
    const profile = profiles.get(name);
    if (profile === undefined) throw new Error(`no profile ${name}`);
    const millicores = (quantity: string): number =>
      quantity.endsWith("m") ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;
    const requested = [profile.opensearch, profile.ollama, profile.cortex, profile.gateway]
      .map((component) => millicores(component.resources.cpu))
      .reduce((sum, each) => sum + each, millicores(appResources.requests.cpu));
    expect(requested).toBeLessThanOrEqual(cores * 700);
  });

  it("pick a profile from allocatable GPUs and the GPU memory label", () => {
    const gpuNode = (memory?: string): NodeLike => ({
      metadata: { labels: memory ? { "nvidia.com/gpu.memory": memory } : {} },
      status: { allocatable: { "nvidia.com/gpu": "1" } },
    });
    expect(selectProfile(gpuInventory([]))).toBe("cpu-only");
    expect(selectProfile(gpuInventory([{ status: { allocatable: { cpu: "16" } } }]))).toBe("cpu-only");
    expect(selectProfile(gpuInventory([gpuNode("16376")]))).toBe("moltbox-baseline");
    expect(selectProfile(gpuInventory([gpuNode("24564"), gpuNode("49140")]))).toBe("large-gpu");
    expect(selectProfile(gpuInventory([gpuNode()]))).toBe("moltbox-baseline");
    expect(gpuInventory([{ ...gpuNode(), spec: { unschedulable: true } }]).count).toBe(0);
  });

  it("convert memory quantities to MiB", () => {
    expect([quantityToMiB("8Gi"), quantityToMiB("512Mi"), quantityToMiB("1G")]).toEqual([8192, 512, 953]);
  });
});
