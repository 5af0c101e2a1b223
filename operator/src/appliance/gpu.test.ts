import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import {
  decideGpu,
  type GpuNodeLike,
  type RuntimeClassState,
  runtimeClassNameOf,
  runtimeClassState,
  usableGpuInventory,
} from "./gpu.js";
import { type GpuInventory, gpuInventory, selectProfile } from "./hardware-profiles.js";
import { applianceConditions } from "./status.js";

const k3sNvidia = { metadata: { name: "nvidia" }, handler: "nvidia" };
const gpuNode = (runtimeHandlers?: string[]): GpuNodeLike => ({
  metadata: { name: "moltbox", labels: { "nvidia.com/gpu.memory": "16376" } },
  status: {
    allocatable: { "nvidia.com/gpu": "1" },
    ...(runtimeHandlers ? { runtimeHandlers: runtimeHandlers.map((name) => ({ name })) } : {}),
  },
});
const labelledNode: GpuNodeLike = {
  metadata: { name: "moltbox", labels: { "nvidia.com/gpu.present": "true" } },
  status: { allocatable: { cpu: "16" } },
};
const cpuNode: GpuNodeLike = { metadata: { name: "mini" }, status: { allocatable: { cpu: "2" } } };
const found: RuntimeClassState = { name: "nvidia", status: "Found", handler: "nvidia" };
const notFound: RuntimeClassState = { name: "nvidia", status: "NotFound" };
const oneGpu: GpuInventory = gpuInventory([gpuNode()]);
const noGpu: GpuInventory = gpuInventory([cpuNode]);
const labelledOnly: GpuInventory = gpuInventory([labelledNode]);

describe("the GPU RuntimeClass", () => {
  it("is the spec's runtimeClassName, else k3s's nvidia", () => {
    expect(runtimeClassNameOf(remramApplianceSpec.parse({}))).toBe("nvidia");
    expect(runtimeClassNameOf(remramApplianceSpec.parse({ ollama: { runtimeClassName: "gpu" } }))).toBe(
      "gpu",
    );
  });

  it("is used when it exists and the nodes do not say otherwise", () => {
    expect(runtimeClassState("nvidia", k3sNvidia, [gpuNode()])).toEqual(found);
    expect(runtimeClassState("nvidia", k3sNvidia, [gpuNode(["", "runc", "nvidia"])])).toEqual(found);
    // A handler name other than the class's own is honoured.
    expect(
      runtimeClassState("gpu", { metadata: { name: "gpu" }, handler: "nvidia" }, [gpuNode(["nvidia"])]),
    ).toEqual({ name: "gpu", status: "Found", handler: "nvidia" });
  });

  it("is missing when no such object exists", () => {
    expect(runtimeClassState("nvidia", undefined, [gpuNode()])).toEqual(notFound);
  });

  it("does not work where every GPU node lists its runtime handlers and none has the class's (k3s ships the class without the toolkit)", () => {
    expect(runtimeClassState("nvidia", k3sNvidia, [gpuNode(["", "runc"]), cpuNode])).toEqual({
      name: "nvidia",
      status: "HandlerMissing",
      handler: "nvidia",
      nodes: ["moltbox"],
    });
    // A GPU node that reports nothing cannot tell, and one that has the handler is enough.
    expect(runtimeClassState("nvidia", k3sNvidia, [gpuNode(["runc"]), gpuNode()]).status).toBe("Found");
    expect(runtimeClassState("nvidia", k3sNvidia, [gpuNode(["runc"]), gpuNode(["nvidia"])]).status).toBe(
      "Found",
    );
    // CPU nodes' handlers do not matter.
    expect(
      runtimeClassState("nvidia", k3sNvidia, [
        { ...cpuNode, status: { runtimeHandlers: [{ name: "runc" }] } },
      ]).status,
    ).toBe("Found");
  });
});

describe("the GPU decision", () => {
  const decide = (
    mode: "auto" | "required" | "disabled",
    inventory: GpuInventory,
    runtimeClass: RuntimeClassState,
    profileUsesGpu = true,
  ) => decideGpu({ mode, inventory, runtimeClass, profileUsesGpu });

  it("uses the GPU under an existing RuntimeClass and applies no device plugin once nvidia.com/gpu is offered", () => {
    expect(decide("auto", oneGpu, found)).toEqual({ useGpu: true, devicePlugin: false });
  });

  it("falls back to the CPU under auto when the RuntimeClass is missing, and sizes the auto profile for no GPU", () => {
    expect(decide("auto", oneGpu, notFound)).toEqual({ useGpu: false, devicePlugin: false });
    expect(selectProfile(usableGpuInventory("auto", oneGpu, notFound))).toBe("cpu-only");
    expect(selectProfile(usableGpuInventory("auto", oneGpu, found))).toBe("moltbox-baseline");
  });

  it("keeps the plain CPU fallback when there is no GPU at all", () => {
    expect(decide("auto", noGpu, found)).toEqual({ useGpu: false, devicePlugin: false });
    expect(decide("auto", noGpu, notFound)).toEqual({ useGpu: false, devicePlugin: false });
  });

  it("applies the device plugin for labelled NVIDIA hardware only when the RuntimeClass it runs under is usable", () => {
    expect(decide("auto", labelledOnly, found)).toEqual({ useGpu: false, devicePlugin: true });
    expect(decide("auto", labelledOnly, notFound)).toEqual({ useGpu: false, devicePlugin: false });
  });

  it("keeps asking for the GPU when it is required, whatever is missing; never under disabled", () => {
    expect(decide("required", noGpu, notFound)).toEqual({ useGpu: true, devicePlugin: false });
    expect(decide("required", noGpu, found)).toEqual({ useGpu: true, devicePlugin: true });
    expect(decide("disabled", oneGpu, found)).toEqual({ useGpu: false, devicePlugin: false });
  });

  it("leaves Ollama on the CPU when the chosen profile does not use a GPU", () => {
    expect(decide("auto", oneGpu, found, false)).toEqual({ useGpu: false, devicePlugin: false });
  });
});

describe("GPUAvailable", () => {
  const available = { exists: true, upToDate: true, available: true };
  const condition = (
    specInput: unknown,
    gpu: GpuInventory,
    runtimeClass: RuntimeClassState | undefined,
    useGpu: boolean,
  ) => {
    const conditions = applianceConditions({
      spec: remramApplianceSpec.parse(specInput),
      gpu,
      useGpu,
      ...(runtimeClass ? { runtimeClass } : {}),
      hostMaxMapCount: 262144,
      workloads: { opensearch: available, ollama: available, cortex: available, gateway: available },
      models: { required: [{ role: "routing", name: "m" }], listed: [{ name: "m" }] },
    });
    return {
      gpu: conditions.find((each) => each.type === "GPUAvailable"),
      ready: conditions.find((each) => each.type === "Ready"),
    };
  };

  it("says GPUFound with a usable RuntimeClass", () => {
    expect(condition({}, oneGpu, found, true).gpu).toMatchObject({ status: "True", reason: "GPUFound" });
  });

  it("keeps the explicit CPU fallback reason when there is no GPU", () => {
    const { gpu, ready } = condition({}, noGpu, notFound, false);
    expect(gpu).toMatchObject({ status: "False", reason: "NoGPUCPUFallback" });
    expect(ready?.status).toBe("True");
  });

  it("names the missing RuntimeClass when auto falls back to the CPU with a GPU present, without blocking Ready", () => {
    const { gpu, ready } = condition({}, oneGpu, notFound, false);
    expect(gpu).toMatchObject({ status: "False", reason: "NoGPURuntimeCPUFallback" });
    expect(gpu?.message).toContain("1 nvidia.com/gpu allocatable, but RuntimeClass nvidia does not exist");
    expect(gpu?.message).toContain("NVIDIA container toolkit");
    expect(ready?.status).toBe("True");
    const labelled = condition({}, labelledOnly, notFound, false).gpu;
    expect(labelled).toMatchObject({ reason: "NoGPURuntimeCPUFallback" });
    expect(labelled?.message).toContain("NVIDIA hardware labelled");
  });

  it("blocks Ready with RuntimeClassNotFound when the GPU is required and the RuntimeClass is missing", () => {
    const { gpu, ready } = condition({ ollama: { gpu: "required" } }, oneGpu, notFound, true);
    expect(gpu).toMatchObject({ status: "False", reason: "RuntimeClassNotFound" });
    expect(gpu?.message).toMatch(
      /^spec\.ollama\.gpu is required, but RuntimeClass nvidia does not exist: install/,
    );
    expect(ready).toMatchObject({ status: "False", reason: "RuntimeClassNotFound" });
    // The runtime is the first thing missing, also when no GPU is advertised yet.
    expect(condition({ ollama: { gpu: "required" } }, noGpu, notFound, true).gpu?.reason).toBe(
      "RuntimeClassNotFound",
    );
  });

  it("blocks Ready with RuntimeHandlerNotFound when the node's runtime lacks the class's handler", () => {
    const missing: RuntimeClassState = {
      name: "nvidia",
      status: "HandlerMissing",
      handler: "nvidia",
      nodes: ["moltbox"],
    };
    const { gpu, ready } = condition({ ollama: { gpu: "required" } }, oneGpu, missing, true);
    expect(gpu).toMatchObject({ status: "False", reason: "RuntimeHandlerNotFound" });
    expect(gpu?.message).toContain("needs runtime handler nvidia, which moltbox does not report");
    expect(ready?.status).toBe("False");
    expect(condition({}, oneGpu, missing, false).gpu?.reason).toBe("NoGPURuntimeCPUFallback");
  });

  it("stays GPUDisabled and GPURequiredButMissing as before", () => {
    expect(condition({ ollama: { gpu: "disabled" } }, oneGpu, notFound, false).gpu?.reason).toBe(
      "GPUDisabled",
    );
    expect(condition({ ollama: { gpu: "required" } }, noGpu, found, true).gpu?.reason).toBe(
      "GPURequiredButMissing",
    );
  });
});
