import type { KnowledgeObject } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadObjects, writeObjects } from "../src/knowledge/repository.js";
import { request } from "../src/store/client.js";
import { dropIndices, ingestEvents, retrieveFor, startCortex } from "./helpers.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = testbedEndpoints("ollama");
const ana = { scope: "user", owner: { userId: "ana", householdId: "home" } } as const;
const bo = { scope: "user", owner: { userId: "bo", householdId: "home" } } as const;
const anaPrincipal = { userId: "ana", householdId: "home", agentId: "main" };

/**
 * Knowledge vectors live in their own index (store/templates.ts). These prove on the real services that k-NN over
 * them stays behind the whole policy gate: the gate fields it carries, and the confidence floor it does not.
 */
describe("knowledge vectors apart from their objects", () => {
  let app: FastifyInstance;
  const ids = new Map<string, string>();

  beforeAll(async () => {
    app = await startCortex({
      opensearchUrl,
      ollamaUrl: ollama.url,
      embedModel: ollama.embedModel,
      embedTimeoutMs: 20_000,
    });
    const facts: [typeof ana | typeof bo, string][] = [
      [ana, "The spare house key hangs behind the fuse box"],
      [ana, "Ana's bicycle lock combination is kept in the blue notebook"],
      [bo, "Bo hid the spare car key under the doormat"],
    ];
    const answer = await ingestEvents(
      app,
      facts.map(([owner, statement]) => ({ kind: "knowledge", ...owner, statement, type: "fact" })),
    );
    expect(answer.embedded).toBe(true);
    facts.forEach(([, statement], i) => {
      ids.set(statement, answer.items[i]?.ids[0] ?? "");
    });
  }, 300_000);
  afterAll(async () => {
    await dropIndices(app);
    await app.close();
  });

  const knnRanked = async (requestText: string) => {
    const answer = await retrieveFor(app, {
      principal: anaPrincipal,
      requestText,
      tokenBudget: 400,
      debug: true,
    });
    expect(answer.degraded, answer.degradedReasons.join("; ")).toBe(false);
    return (answer.trace?.items ?? []).filter((item) => item.knnRank !== null).map((item) => item.id);
  };

  it("stores each object's vector once, in the vectors index, and none in the knowledge document", async () => {
    const { store } = app.cortex;
    const { body } = await request<{ count: number }>(store, "GET", `/${store.indices.vectors}/_count`);
    expect(body.count).toBe(3);
    const { body: raw } = await request<{ _source: Record<string, unknown> }>(
      store,
      "GET",
      `/${store.indices.knowledge}/_doc/${ids.get("The spare house key hangs behind the fuse box")}`,
    );
    expect(raw._source).not.toHaveProperty("embedding");
  });

  it("finds an object by meaning only inside the principal's scope", async () => {
    const found = await knnRanked("where do we keep the extra door key?");
    expect(found).toContain(ids.get("The spare house key hangs behind the fuse box"));
    expect(found).not.toContain(ids.get("Bo hid the spare car key under the doormat"));
  });

  it("drops a vector hit whose object fell below the confidence floor, though its vector did not change", async () => {
    const { store } = app.cortex;
    const id = ids.get("Ana's bicycle lock combination is kept in the blue notebook") ?? "";
    expect(await knnRanked("bike lock code")).toContain(id);
    const previous = (await loadObjects(store, [id])).get(id) as KnowledgeObject;
    await writeObjects(store, [], [{ object: { ...previous, confidence: 0.05 }, previous }]);
    expect(await knnRanked("bike lock code")).not.toContain(id);
  });

  it("moves the vector's gate with the object: a demoted object leaves k-NN, an invalidated one its vector", async () => {
    const { store } = app.cortex;
    const id = ids.get("The spare house key hangs behind the fuse box") ?? "";
    const vectorOf = async () =>
      (
        await request<{ found: boolean; _source?: { status: string } }>(
          store,
          "GET",
          `/${store.indices.vectors}/_doc/${id}?_source_includes=status`,
          undefined,
          { ignore: [404] },
        )
      ).body;
    const active = (await loadObjects(store, [id])).get(id) as KnowledgeObject;
    const demoted = { ...active, status: "demoted" as const };
    await writeObjects(store, [], [{ object: demoted, previous: active }]);
    expect((await vectorOf())._source?.status).toBe("demoted");
    expect(await knnRanked("where do we keep the extra door key?")).not.toContain(id);

    const invalidated = {
      ...demoted,
      status: "invalidated" as const,
      validity: { ...demoted.validity, invalidAt: new Date().toISOString() },
    };
    await writeObjects(store, [], [{ object: invalidated, previous: demoted }]);
    expect((await vectorOf()).found).toBe(false);
  });

  it("skips a conditional update when the object was written since it was read", async () => {
    const { store } = app.cortex;
    const id = ids.get("Bo hid the spare car key under the doormat") ?? "";
    const { body: read } = await request<{
      _seq_no: number;
      _primary_term: number;
      _source: KnowledgeObject;
    }>(store, "GET", `/${store.indices.knowledge}/_doc/${id}`);
    const readAt = { seqNo: read._seq_no, primaryTerm: read._primary_term };
    const previous = read._source;
    await writeObjects(store, [], [{ object: { ...previous, reinforcementCount: 7 }, previous }]);
    const stale = await writeObjects(
      store,
      [],
      [{ object: { ...previous, confidence: 0.99 }, previous, readAt }],
    );
    expect(stale.conflicts).toEqual([id]);
    expect((await loadObjects(store, [id])).get(id)).toMatchObject({
      reinforcementCount: 7,
      confidence: 0.6,
    });
  });
});
