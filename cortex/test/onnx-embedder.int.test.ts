import type { EmbeddingStatus } from "@remram/contract";
import { onnxEmbeddingModel } from "@remram/test-harness";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Embedder } from "../src/store/embedder.js";
import { loadOnnxEmbedder } from "../src/store/onnx-embedder.js";
import { cosine } from "../src/testing/vectors.js";
import {
  dropIndices,
  ingestEvents,
  knowledgeEvent,
  operatorAuth,
  retrieveFor,
  startCortex,
} from "./helpers.js";

// REMRAM_TESTBED=opensearch,ollama. Cortex's in-process embedder (CORTEX_EMBED_RUNTIME=onnx): MiniLM's int8 ONNX
// export (hack/install-embedding-onnx.sh) against the same MiniLM that Ollama serves; then a household's Cortex moved
// from Ollama's vectors to in-process ones, which the re-embedding of a model change carries out. Costs about 15 s.
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = testbedEndpoints("ollama");
const { name: onnxModel, dir: onnxDir } = onnxEmbeddingModel();
const onnx = { dir: onnxDir, model: onnxModel };
const statements = [
  "Ana is allergic to penicillin",
  "The spare house key hangs behind the fuse box",
  "The boiler is serviced every October by Jensen Heating",
  "Ana waters the tomatoes every second morning",
  "The wifi password for guests is on the fridge magnet",
];
/** Questions that share no content word with the statement they ask about (index into `statements`). */
const questions: [string, number][] = [
  ["which medicine must she never be given", 0],
  ["where can I find a key to get into the home", 1],
  ["when does the heating get its yearly check", 2],
  ["how often do the vegetable plants in the garden get water", 3],
  ["how can visitors get on the internet", 4],
];

describe("embeddings computed in Cortex's own process", () => {
  let embedder: Embedder;
  beforeAll(async () => {
    embedder = await loadOnnxEmbedder({
      ...onnx,
      dimensions: 384,
      batchSize: 16,
      threads: 1,
      queryTimeoutMs: 30_000,
    });
  });

  it("gives the vectors Ollama gives for the same MiniLM, up to its int8 quantization", async () => {
    const texts = [...statements, ...questions.map(([question]) => question)];
    const mine = await embedder.embedMany(texts);
    const response = await fetch(`${ollama.url}/api/embed`, {
      method: "POST",
      body: JSON.stringify({ model: ollama.embedModel, input: texts }),
    });
    const { embeddings } = (await response.json()) as { embeddings: number[][] };
    const similarities = texts.map((_, i) => cosine(mine[i] ?? [], embeddings[i] ?? []));
    for (const [i, similarity] of similarities.entries()) {
      expect(similarity, `${texts[i]}: ${similarity}`).toBeGreaterThan(0.97);
    }
    for (const vector of mine) expect(cosine(vector, vector)).toBeCloseTo(1, 6);
  });

  it("finds the statement a question is about without a shared word", async () => {
    const vectors = await embedder.embedMany(statements);
    for (const [question, expected] of questions) {
      const query = await embedder.embedQuery(question);
      const nearest = vectors
        .map((vector, index) => ({ index, similarity: cosine(query, vector) }))
        .sort((a, b) => b.similarity - a.similarity)[0];
      expect(nearest?.index, question).toBe(expected);
    }
  });

  it("gives a text the same vector alone, among others and as a query, and embeds a text far past the limit", async () => {
    // The int8 model quantizes activations per run: texts embedded together in one padded run would shift each
    // other's vectors, so every text runs alone.
    const long = `${"The shed was painted green with outdoor paint from the store on Mill Road. ".repeat(400)}`;
    const [alone] = await embedder.embedMany([statements[0] as string]);
    const batch = await embedder.embedMany([long, statements[0] as string, statements[2] as string]);
    expect(batch[1]).toEqual(alone);
    expect(await embedder.embedQuery(statements[0] as string)).toEqual(alone);
    expect(batch[0]).toHaveLength(384);
    expect(cosine(batch[0] ?? [], batch[0] ?? [])).toBeCloseTo(1, 6);
  });

  it("refuses a model folder that holds another model than the one configured, naming both", async () => {
    await expect(
      loadOnnxEmbedder({
        ...onnx,
        model: "nomic-embed-text",
        dimensions: 768,
        batchSize: 16,
        threads: 1,
        queryTimeoutMs: 1_000,
      }),
    ).rejects.toThrow(
      /is all-minilm-l6-v2-q \(384 dimensions\); Cortex is configured for nomic-embed-text \(768\)/,
    );
    await expect(startCortex({ opensearchUrl, embedRuntime: "onnx" })).rejects.toThrow(
      /CORTEX_EMBED_RUNTIME=onnx needs CORTEX_EMBED_MODEL_DIR/,
    );
  });
});

describe("a household moved from Ollama's vectors to in-process ones", () => {
  let app: FastifyInstance | undefined;
  afterAll(async () => {
    if (app !== undefined) {
      await dropIndices(app);
      await app.close();
    }
  });

  it("re-embeds everything with the in-process model and retrieves by meaning again", async () => {
    const indexPrefix = `it-onnx-${Date.now().toString(36)}`;
    const before = await startCortex({
      opensearchUrl,
      indexPrefix,
      ollamaUrl: ollama.url,
      embedModel: ollama.embedModel,
      embedTimeoutMs: 20_000,
    });
    const stored = await ingestEvents(
      before,
      statements.map((statement, n) => knowledgeEvent("ana", `fact-${n}`, statement)),
    );
    expect(stored.embedded).toBe(true);
    await before.close();

    // No Ollama at all now: the vectors come from Cortex itself.
    app = await startCortex({
      opensearchUrl,
      indexPrefix,
      embedRuntime: "onnx",
      embedModelDir: onnx.dir,
      embedModel: onnx.model,
    });
    const running = app;
    const status = async () =>
      (
        await running.inject({ method: "GET", url: "/admin/embeddings", headers: operatorAuth })
      ).json<EmbeddingStatus>();
    await expect.poll(async () => (await status()).state, { timeout: 60_000, interval: 250 }).toBe("current");
    expect(await status()).toMatchObject({
      model: onnx.model,
      dimensions: 384,
      objects: { done: statements.length, total: statements.length },
    });
    const answer = await retrieveFor(running, {
      principal: { userId: "ana", agentId: "main" },
      modelLocation: "local",
      requestText: "which medicine must she never be given",
      tokenBudget: 400,
      debug: true,
    });
    expect(answer.degraded, answer.degradedReasons.join("; ")).toBe(false);
    const id = answer.facts.find((fact) => fact.statement === statements[0])?.id;
    const penicillin = answer.trace?.items.find((item) => item.id === id);
    expect(penicillin?.knnRank, JSON.stringify(answer.trace?.items)).toBe(1);
  }, 120_000);
});
