import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { RetrieveResponse } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../app.js";
import { cortexConfig } from "../config.js";
import { maturationIndices } from "../knowledge/records.js";
import { maturationPlugin } from "../maturation.js";
import { bearer, headersFor, testCredentials } from "../testing/callers.js";

const alice = { userId: "alice", householdId: "h1", agentId: "main" };
const aliceScope = { kind: "user", ownerIds: ["alice"] };
const day = (n: number) => new Date(Date.UTC(2026, 4, 1, 9) + n * 86_400_000).toISOString();

/**
 * Dream's neighbour graph on the real services: MiniLM vectors from the test bed's Ollama, k-NN in OpenSearch.
 * One index prefix, two Cortex apps on it: one with the embedding model, one without (as while Ollama is down).
 */
describe("dream's neighbour graph with real embeddings", () => {
  const opensearch = testbedEndpoints("opensearch");
  const ollama = testbedEndpoints("ollama");
  const prefix = `it-graph-${randomBytes(4).toString("hex")}`;
  let withModel: FastifyInstance;
  let withoutModel: FastifyInstance;
  let scratch: string;
  let now = day(0);

  const start = async (model: boolean) => {
    const app = await buildApp({
      config: cortexConfig.parse({
        credentials: testCredentials,
        opensearchUrl: opensearch.url,
        ...(model && { ollamaUrl: ollama.url, embedModel: ollama.embedModel, embedTimeoutMs: 20_000 }),
        indexPrefix: prefix,
        logLevel: "silent",
        usageFlushIntervalMs: 3_600_000,
      }),
      logger: false,
      clock: () => new Date(now),
      plugins: [
        maturationPlugin({
          workspaceDir: join(scratch, model ? "with" : "without"),
          archiveDir: join(scratch, model ? "archive-with" : "archive-without"),
          gitAuthor: { name: "Remram Cortex", email: "cortex@remram.invalid" },
        }),
      ],
    });
    await app.cortex.initialized;
    return app;
  };
  const post = async <T>(app: FastifyInstance, url: string, payload: Record<string, unknown>): Promise<T> => {
    const response = await app.inject({ method: "POST", url, headers: headersFor("POST", url), payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<T>();
  };
  const reflect = (app: FastifyInstance, sessionId: string, statements: [string, string][]) =>
    post<{ created: string[]; reinforced: string[] }>(app, "/reflect", {
      principal: alice,
      sessionId,
      items: statements.map(([type, statement]) => ({
        type,
        statement,
        scope: aliceScope,
        sourceTurnIds: [`turn-${randomBytes(3).toString("hex")}`],
      })),
    });
  type Report = { counts: Record<string, number> };
  const dream = (app: FastifyInstance, payload: Record<string, unknown> = {}) =>
    post<Report>(app, "/dream", payload);

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "remram-graph-"));
    withModel = await start(true);
    withoutModel = await start(false);
  });
  afterAll(async () => {
    const { client, indices } = withModel.cortex.store;
    for (const alias of Object.values(indices)) {
      await client.transport.request({ method: "DELETE", path: `/${alias}-v*` }, { ignore: [404] });
      await client.transport.request(
        { method: "DELETE", path: `/_index_template/${alias}` },
        { ignore: [404] },
      );
    }
    for (const index of Object.values(maturationIndices(withModel.cortex.store))) {
      await client.transport.request({ method: "DELETE", path: `/${index}` }, { ignore: [404] });
    }
    await withModel.close();
    await withoutModel.close();
    await rm(scratch, { recursive: true, force: true });
  });

  it("resolves a reversal found only by meaning, and keeps the graph between cycles", async () => {
    now = day(0);
    const first = await reflect(withModel, "s1", [
      ["preference", "Alice likes jazz"],
      ["fact", "Alice keeps her bike in the garage"],
    ]);
    now = day(10);
    // Cosine 0.91 to "Alice likes jazz": near enough to be a duplicate, but it says the opposite.
    const reversal = await reflect(withModel, "s2", [["preference", "Alice does not like jazz"]]);
    expect(reversal.reinforced).toEqual([]);
    expect(reversal.created).toHaveLength(1);

    // A cycle with no time for lookups sees no pair; the next one builds the lists and examines the new pairs,
    // though neither object changed since the cycle before.
    now = day(11);
    expect((await dream(withModel, { neighbourLookupSeconds: 0 })).counts).toMatchObject({
      neighbourListsBuilt: 0,
      neighbourListsPending: 3,
      contradictionsDetected: 0,
    });
    now = day(11.5);
    const cycle = await dream(withModel);
    expect(cycle.counts).toMatchObject({
      neighbourListsBuilt: 3,
      neighbourListsPending: 0,
      contradictionsDetected: 1,
      contradictionsResolved: 1,
      invalidated: 1,
    });
    const [likesId] = first.created;
    const { body } = await withModel.cortex.store.client.get({
      index: withModel.cortex.store.indices.knowledge,
      id: likesId ?? "",
    });
    expect(body._source).toMatchObject({
      status: "invalidated",
      links: expect.arrayContaining([{ rel: "supersededBy", targetId: reversal.created[0] }]),
    });

    now = day(12);
    expect((await dream(withModel)).counts).toMatchObject({
      neighbourListsBuilt: 0,
      neighbourListsPending: 0,
    });
  });

  it("gives an object stored while the model was down its vector in a later cycle, so meaning finds it", async () => {
    now = day(20);
    const stored = await reflect(withoutModel, "s3", [
      ["fact", "The spare house key hangs behind the fuse box"],
    ]);
    now = day(21);
    expect((await dream(withoutModel)).counts).toMatchObject({
      vectorsBackfilled: 0,
      neighbourListsPending: 0,
    });

    now = day(22);
    expect((await dream(withModel)).counts).toMatchObject({ vectorsBackfilled: 1, neighbourListsBuilt: 1 });
    const response = await withModel.inject({
      method: "POST",
      url: "/retrieve",
      headers: bearer("gateway"),
      payload: {
        principal: alice,
        requestText: "where is the extra door key?",
        tokenBudget: 400,
        debug: true,
      },
    });
    const answer = response.json<RetrieveResponse>();
    const traced = answer.trace?.items.find((item) => item.id === stored.created[0]);
    expect(traced?.knnRank, JSON.stringify(answer.trace?.items)).not.toBeNull();
  });
});
