import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../../api/v1alpha1/remram-appliance.js";
import { repairInterruptedDownloadsScript } from "../ollama-downloads.js";
import { applianceContext } from "../testing/context.js";
import { podOf } from "../testing/pod.js";
import { buildOllama, requiredModelList } from "./ollama.js";

const context = applianceContext;

describe("the appliance's children", () => {
  it("give Ollama the nvidia runtime class, one GPU and the GPU toleration when the GPU is used", () => {
    const pod = podOf(buildOllama(context({})).find((child) => child.kind === "Deployment"));
    expect(pod.runtimeClassName).toBe("nvidia");
    expect(pod.containers[0]?.resources?.limits?.["nvidia.com/gpu"]).toBe("1");
    expect(pod.tolerations).toEqual([{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }]);
  });

  it("repair Ollama's interrupted downloads before it serves, with its own image over its models volume", () => {
    const pod = podOf(
      buildOllama(context({ ollama: { image: "ollama/ollama:0.24.0" } })).find(
        (child) => child.kind === "Deployment",
      ),
    );
    const [repair] = pod.initContainers ?? [];
    expect(repair).toMatchObject({
      name: "repair-downloads",
      image: "ollama/ollama:0.24.0",
      command: ["sh", "-c", repairInterruptedDownloadsScript],
      env: [{ name: "OLLAMA_MODELS", value: "/models" }],
      volumeMounts: [{ name: "models", mountPath: "/models" }],
    });
  });

  it("leave the GPU out entirely on the CPU fallback", () => {
    const pod = podOf(
      buildOllama(context({}, { useGpu: false })).find((child) => child.kind === "Deployment"),
    );
    expect(pod.runtimeClassName).toBeUndefined();
    expect(pod.tolerations).toBeUndefined();
    expect(pod.containers[0]?.resources?.limits?.["nvidia.com/gpu"]).toBeUndefined();
  });
});

describe("the models Ollama must hold", () => {
  it("are the three roles' models, then each agent's own model that no role names, once", () => {
    const ctx = context({
      ollama: { models: { routing: "qwen3:8b", reflection: "qwen3:8b", embedding: "minilm" } },
      gateway: {
        agents: [
          { id: "main" },
          { id: "reader", model: "tool-user:1b" },
          { id: "writer", model: "tool-user:1b" },
          { id: "planner", model: "qwen3:8b" },
        ],
      },
    });
    expect(requiredModelList(ctx)).toEqual([
      { role: "routing", name: "qwen3:8b" },
      { role: "reflection", name: "qwen3:8b" },
      { role: "embedding", name: "minilm" },
      { role: "agent", name: "tool-user:1b" },
    ]);
  });
});

describe("the models Ollama must hold with in-process embeddings", () => {
  it("leave the embedding model out: Cortex embeds with the model in its image", () => {
    const ctx = context({
      cortex: { embedding: { runtime: "inProcess" } },
      ollama: { models: { routing: "qwen3:8b", reflection: "qwen3:1.7b" } },
    });
    expect(requiredModelList(ctx)).toEqual([
      { role: "routing", name: "qwen3:8b" },
      { role: "reflection", name: "qwen3:1.7b" },
    ]);
  });
});

describe("in-process embeddings in the operator's own reading of a spec", () => {
  it("refuse an Ollama embedding model or another vector length beside them, as the CRD's rule does", () => {
    const inProcess = { cortex: { embedding: { runtime: "inProcess" } } };
    for (const models of [{ embedding: "nomic" }, { embeddingDimensions: 768 }]) {
      const result = remramApplianceSpec.safeParse({ ...inProcess, ollama: { models } });
      expect(result.error?.issues).toEqual([
        expect.objectContaining({
          path: ["cortex", "embedding", "runtime"],
          message: expect.stringContaining(
            "leave ollama.models.embedding unset and embeddingDimensions at 384",
          ),
        }),
      ]);
    }
    expect(remramApplianceSpec.safeParse(inProcess).success).toBe(true);
  });
});
