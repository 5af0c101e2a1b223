import { randomBytes } from "node:crypto";
import type { ConsistencyReport, EmbeddingStatus } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "../src/store/client.js";
import {
  adminAuth,
  type FullCortex,
  ingestEvents,
  knowledgeEvent,
  operatorAuth,
  retrieveFor,
  startCortex,
  startFullCortex,
} from "./helpers.js";

// REMRAM_TESTBED=opensearch,ollama. The appliance's embedding model is changed: from MiniLM (384 dimensions) to a
// model of 576 (SmolLM2's hidden states; any model Ollama can embed with would do). The new model is first
// missing from Ollama (the operator is still pulling it), Cortex restarts meanwhile, then the model arrives: every
// object and chunk ends up with a vector of the new model in indices of the new dimension, the old indices are
// deleted, and retrieval is semantic again. Costs about 40 s.
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = testbedEndpoints("ollama");
const ana = { userId: "ana", householdId: "h1", agentId: "main" };
// Private knowledge reaches only runs on a local model.
const local = { principal: ana, modelLocation: "local", tokenBudget: 400 } as const;
const statements = [
  "The spare house key hangs behind the fuse box",
  "Ana's bicycle lock combination is kept in the blue notebook",
  "Ana is allergic to penicillin",
  "The wifi password for guests is on the fridge magnet",
  "Ana waters the tomatoes every second morning",
  "The boiler is serviced every October by Jensen Heating",
];
const transcript = [
  "Ana: we should repaint the garden shed before winter.",
  "Assistant: the shed was last painted in 2021 with green outdoor paint.",
  "Ana: then we buy the same green again at the hardware store on Mill Road.",
].join("\n");

describe("changing the embedding model re-embeds every object and chunk", () => {
  const indexPrefix = `it-${randomBytes(4).toString("hex")}`;
  const newModel = `it-reembed-${randomBytes(3).toString("hex")}`;
  const changed = {
    opensearchUrl,
    indexPrefix,
    ollamaUrl: ollama.url,
    embedModel: newModel,
    embedDimensions: 576,
    embedTimeoutMs: 20_000,
    embedFillRetryMs: 300,
  };
  let before: { knowledge: number; chunkIds: string[] };
  let cortex: FullCortex | undefined;
  let app: FastifyInstance;

  const status = async (): Promise<EmbeddingStatus> => {
    const response = await app.inject({ method: "GET", url: "/admin/embeddings", headers: operatorAuth });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<EmbeddingStatus>();
  };
  const aliased = async (alias: string) => {
    const { body } = await request<Record<string, unknown>>(app.cortex.store, "GET", `/_alias/${alias}`);
    return Object.keys(body);
  };
  const ollamaCall = (path: string, method: string, body: unknown) =>
    fetch(`${ollama.url}${path}`, { method, body: JSON.stringify(body) });

  beforeAll(async () => {
    const first = await startCortex({
      opensearchUrl,
      indexPrefix,
      ollamaUrl: ollama.url,
      embedModel: ollama.embedModel,
      embedTimeoutMs: 20_000,
    });
    const stored = await ingestEvents(first, [
      ...statements.map((statement, n) => knowledgeEvent("ana", `fact-${n}`, statement)),
      {
        kind: "document",
        sourceKind: "artifact",
        sourceId: "shed-notes",
        scope: "user",
        owner: { userId: "ana", householdId: "h1" },
        text: transcript,
      },
    ]);
    expect(stored.embedded).toBe(true);
    const { store } = first.cortex;
    await request(store, "POST", `/${store.indices.knowledge},${store.indices.chunks}/_refresh`);
    const { body: chunks } = await request<{ hits: { hits: { _id: string }[] } }>(
      store,
      "POST",
      `/${store.indices.chunks}/_search`,
      { size: 100, _source: false, sort: [{ id: "asc" }] },
    );
    const { body: count } = await request<{ count: number }>(
      store,
      "GET",
      `/${store.indices.knowledge}/_count`,
    );
    before = { knowledge: count.count, chunkIds: chunks.hits.hits.map((hit) => hit._id) };
    expect(before.chunkIds.length).toBeGreaterThan(0);
    await first.close();
  }, 240_000);
  afterAll(async () => {
    await cortex?.stop();
    await ollamaCall("/api/delete", "DELETE", { model: newModel }).catch(() => undefined);
  });

  it("waits for a model still missing, across a restart, and keeps answering by words meanwhile", async () => {
    const waiting = await startCortex(changed);
    app = waiting;
    const { indices } = app.cortex.store;
    // The vectors alias moved at start to an empty index of 576 dimensions; the chunks were copied without theirs.
    const [vectorsIndex] = await aliased(indices.vectors);
    expect(vectorsIndex).toMatch(new RegExp(`^${indices.vectors}-v\\d+-e[0-9a-f]{10}$`));
    const { body: mapping } = await request<
      Record<string, { mappings: { properties: { embedding: { dimension: number } } } }>
    >(app.cortex.store, "GET", `/${vectorsIndex}/_mapping`);
    expect(mapping[vectorsIndex ?? ""]?.mappings.properties.embedding.dimension).toBe(576);
    await expect.poll(async () => (await status()).waiting ?? "", { timeout: 30_000 }).toMatch(/not found/);
    const paused = await status();
    expect(paused).toMatchObject({
      model: newModel,
      dimensions: 576,
      state: "reembedding",
      replacing: { model: ollama.embedModel, dimensions: 384 },
    });
    expect(paused.objects.total).toBe(before.knowledge);

    // Found by its words while it has no vector of the new model; the answer says why it is lexical only.
    const answer = await retrieveFor(app, { ...local, requestText: "where is the spare house key" });
    expect(answer.facts.map((fact) => fact.statement)).toContain(statements[0]);
    expect(answer.degradedReasons.join("; ")).toMatch(/embedding unavailable, lexical only/);
    // A write meanwhile is stored (without a vector: the model cannot embed it yet) and is filled later.
    await ingestEvents(app, [knowledgeEvent("ana", "fact-late", "Ana keeps the ladder in the garage loft")]);
    await app.close();

    // Restarted before the model arrived: the change is remembered in the new indices and resumed.
    cortex = await startFullCortex(changed);
    app = cortex.app;
    expect(await status()).toMatchObject({ state: "reembedding", replacing: { model: ollama.embedModel } });
  }, 180_000);

  it("fills every vector once the model is there, deletes the old indices, and retrieves semantically again", async () => {
    const copied = await ollamaCall("/api/copy", "POST", { source: ollama.chatModel, destination: newModel });
    expect(copied.status).toBe(200);
    await expect
      .poll(async () => (await status()).state, { timeout: 150_000, interval: 500 })
      .toBe("current");
    const done = await status();
    expect(done.replacing).toBeUndefined();
    expect(done.waiting).toBeUndefined();
    expect(done.finishedAt).toBeDefined();

    const { store } = app.cortex;
    const { indices } = store;
    // Only the new generations are left under each alias's name.
    for (const alias of [indices.vectors, indices.chunks]) {
      const { body } = await request<{ index: string }[]>(
        store,
        "GET",
        `/_cat/indices/${alias}-v*?format=json&h=index`,
      );
      expect(body.map((row) => row.index)).toEqual(await aliased(alias));
    }
    const vectors = await request<{ hits: { hits: { _id: string; _source: { embeddingModel: string } }[] } }>(
      store,
      "POST",
      `/${indices.vectors}/_search`,
      { size: 100, _source: ["embeddingModel"] },
    );
    // Every object has a vector of the new model, the one written while the model was missing included.
    expect(vectors.body.hits.hits).toHaveLength(before.knowledge + 1);
    expect(new Set(vectors.body.hits.hits.map((hit) => hit._source.embeddingModel))).toEqual(
      new Set([newModel]),
    );
    const chunks = await request<{
      hits: { hits: { _id: string; _source: { embeddingModel: string; embedding: number[] } }[] };
    }>(store, "POST", `/${indices.chunks}/_search`, {
      size: 100,
      _source: ["embeddingModel", "embedding"],
      sort: [{ id: "asc" }],
    });
    expect(chunks.body.hits.hits.map((hit) => hit._id)).toEqual(before.chunkIds);
    for (const hit of chunks.body.hits.hits) {
      expect(hit._source.embeddingModel).toBe(newModel);
      expect(hit._source.embedding).toHaveLength(576);
    }

    const answer = await retrieveFor(app, {
      ...local,
      requestText: "which medicine must Ana never be given",
      debug: true,
    });
    expect(answer.degraded, answer.degradedReasons.join("; ")).toBe(false);
    expect((answer.trace?.items ?? []).some((item) => item.knnRank !== null)).toBe(true);

    const check = await app.inject({ method: "POST", url: "/admin/check", headers: adminAuth });
    expect(check.statusCode, check.body).toBe(200);
    const report = check.json<ConsistencyReport>();
    expect(report.findings).toEqual([]);
    expect(report.counts.awaitingVector).toBe(0);
  }, 240_000);
});
