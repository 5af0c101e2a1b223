import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import { mergeConditions } from "../runtime/conditions.js";
import {
  type ApplianceObservation,
  applianceConditions,
  degradedCondition,
  observeWorkload,
} from "./status.js";

const available = { exists: true, upToDate: true, available: true };
const models = {
  required: [
    { role: "routing" as const, name: "qwen3:8b" },
    { role: "embedding" as const, name: "all-minilm:l6-v2" },
  ],
  listed: [{ name: "qwen3:8b" }, { name: "all-minilm:l6-v2" }],
};

function observation(overrides: Partial<ApplianceObservation> = {}): ApplianceObservation {
  return {
    spec: remramApplianceSpec.parse({}),
    gpu: { count: 1, hardwareLabelled: true },
    useGpu: true,
    hostMaxMapCount: 262144,
    workloads: { opensearch: available, ollama: available, cortex: available, gateway: available },
    models,
    ...overrides,
  };
}

const byType = (conditions: ReturnType<typeof applianceConditions>) =>
  Object.fromEntries(conditions.map((condition) => [condition.type, condition]));

describe("the appliance's conditions", () => {
  it("are Ready when every component is available and the models are listed", () => {
    const conditions = byType(applianceConditions(observation()));
    expect(conditions.Ready).toMatchObject({ status: "True", reason: "Ready" });
    expect(conditions.GPUAvailable).toMatchObject({ status: "True", reason: "GPUFound" });
    expect(conditions.Progressing?.status).toBe("False");
  });

  it("explain the CPU fallback without blocking Ready", () => {
    const conditions = byType(
      applianceConditions(observation({ gpu: { count: 0, hardwareLabelled: false }, useGpu: false })),
    );
    expect(conditions.GPUAvailable).toMatchObject({ status: "False", reason: "NoGPUCPUFallback" });
    expect(conditions.Ready?.status).toBe("True");
  });

  it("block Ready when a GPU is required and none exists", () => {
    const spec = remramApplianceSpec.parse({ ollama: { gpu: "required" } });
    const conditions = byType(
      applianceConditions(observation({ spec, gpu: { count: 0, hardwareLabelled: false } })),
    );
    expect(conditions.Ready).toMatchObject({ status: "False", reason: "GPURequiredButMissing" });
  });

  it("report a low vm.max_map_count as an unmet host prerequisite", () => {
    const conditions = byType(applianceConditions(observation({ hostMaxMapCount: 65530 })));
    expect(conditions.HostPrerequisitesMet).toMatchObject({ status: "False", reason: "VmMaxMapCountTooLow" });
    expect(conditions.Ready?.status).toBe("False");
  });

  it("let an unmeasured vm.max_map_count pass (it cannot be read on every runtime) but name it", () => {
    const { hostMaxMapCount: _unmeasured, ...rest } = observation();
    const conditions = byType(applianceConditions(rest));
    expect(conditions.HostPrerequisitesMet).toMatchObject({ status: "Unknown", reason: "NotMeasured" });
    expect(conditions.Ready?.status).toBe("True");
  });

  it("take an external cluster's OpenSearchReady from the operator's request to it, and block Ready on it", () => {
    const spec = remramApplianceSpec.parse({
      opensearch: { mode: "external", external: { url: "https://search.lan:9200" } },
    });
    const unasked = byType(applianceConditions(observation({ spec })));
    expect(unasked.OpenSearchReady).toMatchObject({ status: "Unknown", reason: "NotMeasured" });
    const refused = byType(
      applianceConditions(
        observation({
          spec,
          externalOpenSearch: {
            type: "OpenSearchReady",
            status: "False",
            reason: "OpenSearchUnauthorized",
            message: "refused",
          },
        }),
      ),
    );
    expect(refused.Ready).toMatchObject({ status: "False", reason: "OpenSearchUnauthorized" });
    expect(refused.HostPrerequisitesMet?.reason).toBe("ExternalOpenSearch");
  });

  it("hold ModelsReady until /api/tags lists every required model, accepting the :latest tag", () => {
    const pulling = byType(
      applianceConditions(observation({ models: { ...models, listed: [{ name: "qwen3:8b" }] } })),
    );
    expect(pulling.ModelsReady).toMatchObject({ status: "Unknown", reason: "ModelsPulling" });
    const latest = byType(
      applianceConditions(
        observation({
          models: {
            required: [{ role: "embedding", name: "minilm" }],
            listed: [{ name: "minilm:latest" }],
          },
        }),
      ),
    );
    expect(latest.ModelsReady?.status).toBe("True");
  });

  it("word ModelsReady with each pull's progress, and a failed pull as ModelPullFailed beside the others", () => {
    const required = [
      { role: "routing" as const, name: "qwen3:8b" },
      { role: "reflection" as const, name: "qwen3:8b" },
      { role: "embedding" as const, name: "embed-model" },
    ];
    const pulls = new Map([
      [
        "embed-model",
        { status: "downloading", completedBytes: 180_000_000, totalBytes: 430_000_000, percent: 41 },
      ],
      ["qwen3:8b", { status: "pulling manifest", completedBytes: 0, totalBytes: 0, percent: 0 }],
    ]);
    const pulling = byType(applianceConditions(observation({ models: { required, listed: [], pulls } })));
    expect(pulling.ModelsReady).toMatchObject({
      status: "Unknown",
      reason: "ModelsPulling",
      message: "pulling qwen3:8b: pulling manifest; embed-model 41% (180 MB of 430 MB)",
    });
    const failed = byType(
      applianceConditions(
        observation({
          models: {
            required,
            listed: [],
            pulls,
            pullErrors: new Map([["qwen3:8b", "pull failed: terminated (other side closed)"]]),
          },
        }),
      ),
    );
    expect(failed.ModelsReady).toMatchObject({
      status: "False",
      reason: "ModelPullFailed",
      message:
        "qwen3:8b: pull failed: terminated (other side closed); pulling embed-model 41% (180 MB of 430 MB)",
    });
    expect(failed.Ready?.status).toBe("False");
  });

  it("mark a rollout as Progressing", () => {
    const rolling = { exists: true, upToDate: false, available: true };
    const conditions = byType(
      applianceConditions(observation({ workloads: { ...observation().workloads, cortex: rolling } })),
    );
    expect(conditions.Progressing).toMatchObject({ status: "True", reason: "RollingOut" });
    expect(conditions.Ready?.status).toBe("Unknown");
  });

  it("turn Degraded on only after Ready has been False for ten minutes", () => {
    const failing = mergeConditions(
      undefined,
      [{ type: "Ready", status: "False", reason: "NotAvailable", message: "x" }],
      1,
      "2026-01-01T00:00:00Z",
    );
    const start = Date.parse("2026-01-01T00:00:00Z");
    expect(degradedCondition(failing, start + 9 * 60_000).status).toBe("False");
    expect(degradedCondition(failing, start + 10 * 60_000).status).toBe("True");
  });
});

describe("workload observation", () => {
  it("needs the latest generation observed and every replica updated before calling it up to date", () => {
    expect(
      observeWorkload({
        metadata: { generation: 3 },
        spec: { replicas: 1 },
        status: { observedGeneration: 2, updatedReplicas: 1, availableReplicas: 1 },
      }),
    ).toEqual({ exists: true, upToDate: false, available: true });
    expect(
      observeWorkload({
        metadata: { generation: 3 },
        spec: { replicas: 1 },
        status: { observedGeneration: 3, updatedReplicas: 1, availableReplicas: 1 },
      }),
    ).toEqual({ exists: true, upToDate: true, available: true });
    expect(observeWorkload(undefined).exists).toBe(false);
  });
});
