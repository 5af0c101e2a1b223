// A household changes its embedding model on real pods: `kubectl patch` of spec.ollama.models.embedding and its
// dimensions. The operator gives Cortex the new model (Cortex rolls), Cortex re-embeds every object and chunk into
// indices of the new dimension, and the operator reports it in status.embeddings and EmbeddingsCurrent; what the
// household said before is still recalled. SmolLM2 stands in for "another embedding model": the registry beside
// the node holds no second embedding model, and Ollama embeds with SmolLM2 (576 dimensions). Then to in-process
// embeddings (spec.cortex.embedding.runtime inProcess: the MiniLM model in Cortex's image, no Ollama model), and
// back to MiniLM through Ollama, so the suites after this one run on the appliance as installed.
import { describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import { inProcessEmbeddingModel } from "../src/api/v1alpha1/remram-appliance.js";
import {
  applianceReadyAndCurrent,
  kubectl,
  measured,
  modelRegistry,
  namespace,
  patchApplianceSpec,
} from "./real-appliance.js";
import { knownFact, knownFactQuestion, recall } from "./real-appliance-conversation.js";

interface Embeddings {
  model?: string;
  dimensions: number;
  state: string;
  done: number;
  total: number;
}

const patchEmbedding = (model: string, dimensions: number) =>
  patchApplianceSpec({
    cortex: { embedding: { runtime: "ollama" } },
    ollama: { models: { embedding: model, embeddingDimensions: dimensions } },
  });
async function cortexEnv(): Promise<Record<string, string>> {
  const json = await kubectl(["-n", namespace, "get", "deployment", "moltbox-cortex", "-o", "json"]);
  const deployment = JSON.parse(json) as {
    spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  };
  const env = deployment.spec.template.spec.containers[0]?.env ?? [];
  return Object.fromEntries(env.map((variable) => [variable.name, variable.value ?? ""]));
}

async function modelRoles(): Promise<string[]> {
  const json = await kubectl(["-n", namespace, "get", "remramappliance", "moltbox", "-o", "json"]);
  const models = (JSON.parse(json) as { status?: { models?: { role: string }[] } }).status?.models ?? [];
  return models.map((model) => model.role);
}

/** Status once the appliance is Ready again and its vectors are current with `model`. */
async function embeddedWith(model: string): Promise<{ embeddings: Embeddings; message: string }> {
  return waitFor(
    async () => {
      if (!(await applianceReadyAndCurrent())) return undefined;
      const json = await kubectl(["-n", namespace, "get", "remramappliance", "moltbox", "-o", "json"]);
      const status = (
        JSON.parse(json) as {
          status?: {
            embeddings?: Embeddings;
            conditions?: { type: string; status: string; message: string }[];
          };
        }
      ).status;
      const condition = status?.conditions?.find((c) => c.type === "EmbeddingsCurrent");
      const embeddings = status?.embeddings;
      if (condition?.status !== "True" || embeddings?.model !== model) return undefined;
      return { embeddings, message: condition.message };
    },
    { what: `EmbeddingsCurrent=True with ${model}`, timeoutMs: 300_000, intervalMs: 2_000 },
  );
}

export function describeReembedding(): void {
  describe("the household's memory after an embedding model change", () => {
    it("is re-embedded with the new model, recalled meanwhile and after, and again when changed back", async () => {
      const before = await embeddedWith(modelRegistry.embedModel);
      expect(before.embeddings.dimensions).toBe(384);

      const changed = Date.now();
      await patchEmbedding(modelRegistry.chatModel, 576);
      const after = await embeddedWith(modelRegistry.chatModel);
      measured.reembeddingSeconds = Math.round((Date.now() - changed) / 1000);
      expect(after.embeddings).toMatchObject({ dimensions: 576, state: "current" });
      expect(after.embeddings.total).toBeGreaterThan(0);
      expect(after.embeddings.done).toBe(after.embeddings.total);
      expect(after.message).toBe(
        `every stored object and chunk has its vector of ${modelRegistry.chatModel} (576 dimensions)`,
      );
      expect(await recall(knownFactQuestion)).toContain(knownFact);

      // In process: the operator drops the embedding model from what Ollama must hold, Cortex embeds with its own.
      const toInProcess = Date.now();
      await patchApplianceSpec({
        cortex: { embedding: { runtime: "inProcess" } },
        ollama: { models: { embedding: null, embeddingDimensions: 384 } },
      });
      const inProcess = await embeddedWith(inProcessEmbeddingModel.name);
      measured.inProcessReembeddingSeconds = Math.round((Date.now() - toInProcess) / 1000);
      expect(inProcess.embeddings).toMatchObject({ dimensions: 384, state: "current" });
      expect(inProcess.embeddings.done).toBe(inProcess.embeddings.total);
      expect(await cortexEnv()).toMatchObject({
        CORTEX_EMBED_RUNTIME: "onnx",
        CORTEX_EMBED_MODEL_DIR: inProcessEmbeddingModel.dir,
        REMRAM_EMBED_MODEL: inProcessEmbeddingModel.name,
      });
      expect(await modelRoles()).not.toContain("embedding");
      expect(await recall(knownFactQuestion)).toContain(knownFact);

      await patchEmbedding(modelRegistry.embedModel, 384);
      const back = await embeddedWith(modelRegistry.embedModel);
      expect(await cortexEnv()).not.toHaveProperty("CORTEX_EMBED_RUNTIME");
      expect(await modelRoles()).toContain("embedding");
      expect(back.embeddings).toMatchObject({ dimensions: 384, state: "current" });
      expect(back.embeddings.done).toBe(back.embeddings.total);
      expect(await recall(knownFactQuestion)).toContain(knownFact);
    }, 700_000);
  });
}
