import { testbedEndpoints } from "@remram/test-harness/vitest";
import { describe, expect, it } from "vitest";
import { createOllamaEmbedder } from "./embedder.js";

// REMRAM_TESTBED=ollama. Ollama refuses a text longer than MiniLM's context ("the input length exceeds the context
// length") although Cortex asks it to truncate, and the whole batch failed with it: transcripts' long passages were
// stored without vectors, and a re-embedding stalled on them. About 10 s.
const ollama = testbedEndpoints("ollama");

describe("the Ollama embedder on texts longer than the model's context", () => {
  const embedder = createOllamaEmbedder({
    url: ollama.url,
    model: ollama.embedModel,
    dimensions: 384,
    batchSize: 64,
    concurrency: 2,
    queryTimeoutMs: 60_000,
    batchTimeoutMs: 120_000,
  });
  const long = Array.from({ length: 600 }, (_, i) => `word${i} of a very long passage`).join(" ");

  it("embeds a batch holding one, each text in its place, the long one by its start", async () => {
    const texts = ["The ladder is in the garden shed", long, "Ana waters the tomatoes"];
    const vectors = await embedder.embedMany(texts);
    expect(vectors).toHaveLength(3);
    for (const vector of vectors) expect(vector).toHaveLength(384);
    // The short ones are what they are alone: nothing was shifted by the split.
    expect(vectors[0]).toEqual((await embedder.embedMany([texts[0] as string]))[0]);
    expect(vectors[2]).toEqual((await embedder.embedMany([texts[2] as string]))[0]);
  }, 120_000);

  it("embeds a long query instead of failing it", async () => {
    expect(await embedder.embedQuery(long)).toHaveLength(384);
  }, 60_000);
});
