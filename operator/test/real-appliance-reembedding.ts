// A household changes its embedding model on real pods: `kubectl patch` of spec.ollama.models.embedding and its
// dimensions. The operator gives Cortex the new model (Cortex rolls), Cortex re-embeds every object and chunk into
// indices of the new dimension, and the operator reports it in status.embeddings and EmbeddingsCurrent; what the
// household said before is still recalled. Then back to MiniLM, which re-embeds once more, so the suites after
// this one run on the appliance as installed. SmolLM2 stands in for "another embedding model": the registry
// beside the node holds no second embedding model, and Ollama embeds with SmolLM2 (576 dimensions).
import { describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
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
  patchApplianceSpec({ ollama: { models: { embedding: model, embeddingDimensions: dimensions } } });

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

      await patchEmbedding(modelRegistry.embedModel, 384);
      const back = await embeddedWith(modelRegistry.embedModel);
      expect(back.embeddings).toMatchObject({ dimensions: 384, state: "current" });
      expect(back.embeddings.done).toBe(back.embeddings.total);
      expect(await recall(knownFactQuestion)).toContain(knownFact);
    }, 700_000);
  });
}
