import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DreamReportResponse, KnowledgeObject } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../app.js";
import { cortexConfig } from "../config.js";
import { maturationIndices } from "../knowledge/records.js";
import { loadObjects, writeObjects } from "../knowledge/repository.js";
import { maturationPlugin } from "../maturation.js";
import { request } from "../store/client.js";
import { headersFor, testCredentials } from "../testing/callers.js";
import { storedObject } from "../testing/fixtures.js";

const day = (n: number) => new Date(Date.UTC(2026, 6, 1, 9) + n * 86_400_000).toISOString();

/**
 * Dream words a new principle with the reflection model, through real Cortex, OpenSearch and the test bed's
 * Ollama, and defers it while the model cannot answer. One index prefix, one app at a time: with Ollama
 * unreachable, with a reflection model Ollama does not have, then with the test bed's chat model (SmolLM2-135M:
 * for one recurring statement it answers that statement, a grounded wording; for clusters of differently worded
 * notes it mostly copies the prompt or invents, which the checks refuse — unit-tested in wording.test.ts).
 */
describe("principle wording by the reflection model", () => {
  const opensearch = testbedEndpoints("opensearch");
  const ollama = testbedEndpoints("ollama");
  const prefix = `it-wording-${randomBytes(4).toString("hex")}`;
  const bedtime = "The children go to bed at eight";
  let scratch: string;
  let app: FastifyInstance | undefined;
  let now = day(0);

  const start = async (ollamaUrl: string, reflectionModel: string) => {
    await app?.close();
    app = await buildApp({
      config: cortexConfig.parse({
        credentials: testCredentials,
        opensearchUrl: opensearch.url,
        ollamaUrl,
        embedModel: ollama.embedModel,
        embedTimeoutMs: 20_000,
        reflectionModel,
        indexPrefix: prefix,
        logLevel: "silent",
        usageFlushIntervalMs: 3_600_000,
      }),
      logger: false,
      clock: () => new Date(now),
      plugins: [
        maturationPlugin({
          workspaceDir: join(scratch, "workspace"),
          archiveDir: join(scratch, "archive"),
          gitAuthor: { name: "Remram Cortex", email: "cortex@remram.invalid" },
        }),
      ],
    });
    await app.cortex.initialized;
    return app;
  };
  const dream = async (on: FastifyInstance): Promise<DreamReportResponse> => {
    const response = await on.inject({
      method: "POST",
      url: "/dream",
      headers: headersFor("POST", "/dream"),
      payload: {},
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<DreamReportResponse>();
  };
  const principles = async (on: FastifyInstance): Promise<KnowledgeObject[]> => {
    const { body } = await request<{ hits: { hits: { _source: KnowledgeObject }[] } }>(
      on.cortex.store,
      "POST",
      `/${on.cortex.store.indices.knowledge}/_search`,
      { query: { term: { type: "principle" } } },
    );
    return body.hits.hits.map((hit) => hit._source);
  };

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "remram-wording-"));
    // Ollama at a port nothing listens on: reflection-model and embedding calls fail at once.
    const down = await start("http://127.0.0.1:9", ollama.chatModel);
    // The household's bedtime rule, asserted in three sessions: a pattern the rules make a principle.
    await writeObjects(
      down.cortex.store,
      [
        {
          object: storedObject({
            id: "bedtime",
            type: "constraint",
            statement: bedtime,
            confidence: 0.75,
            reinforcementCount: 3,
            sessionIds: ["b1", "b2", "b3"],
            lastReinforcedAt: day(0),
            createdAt: day(-2),
            updatedAt: day(0),
          }),
          embedding: null,
          embeddingModel: null,
        },
      ],
      [],
    );
  });
  afterAll(async () => {
    if (app) {
      const { client, indices } = app.cortex.store;
      for (const alias of Object.values(indices)) {
        await client.transport.request({ method: "DELETE", path: `/${alias}-v*` }, { ignore: [404] });
        await client.transport.request(
          { method: "DELETE", path: `/_index_template/${alias}` },
          { ignore: [404] },
        );
      }
      for (const index of Object.values(maturationIndices(app.cortex.store))) {
        await client.transport.request({ method: "DELETE", path: `/${index}` }, { ignore: [404] });
      }
      await app.close();
    }
    await rm(scratch, { recursive: true, force: true });
  });

  it("defers the principle while Ollama is unreachable, finishes the cycle, and stores nothing of it", async () => {
    const down = app as FastifyInstance;
    const report = await dream(down);
    expect(report.counts).toMatchObject({ principlesCreated: 0, principlesWorded: 0, principlesDeferred: 1 });
    expect(report.deferredPrinciples).toEqual([
      {
        principleId: expect.stringMatching(/^principle-/),
        reason: expect.stringContaining("reflection model unavailable"),
      },
    ]);
    expect(await principles(down)).toEqual([]);
    // No half-made principle: its evidence does not point at it either.
    expect((await loadObjects(down.cortex.store, ["bedtime"])).get("bedtime")?.links).toEqual([]);
    expect(await down.cortex.metrics.registry.metrics()).toContain(
      'cortex_dream_principle_wordings_total{outcome="unavailable"} 1',
    );
  });

  it("defers it again when Ollama answers but does not have the reflection model", async () => {
    now = day(1);
    const missing = await start(ollama.url, "no-such-reflection-model");
    const report = await dream(missing);
    expect(report.counts).toMatchObject({ principlesCreated: 0, principlesDeferred: 1 });
    expect(report.deferredPrinciples[0]?.reason).toMatch(/unavailable.*no-such-reflection-model/);
  });

  it("words it with the reflection model once it answers: a grounded sentence with evidence links", async () => {
    now = day(2);
    const up = await start(ollama.url, ollama.chatModel);
    const report = await dream(up);
    expect(report.counts).toMatchObject({ principlesCreated: 1, principlesWorded: 1, principlesDeferred: 0 });
    const [principle, ...others] = await principles(up);
    expect(others).toEqual([]);
    // SmolLM2 restates the rule ("The children go to bed at eight."); the checks held it to the evidence.
    expect(principle?.statement).toMatch(/children/i);
    expect(principle?.statement).toMatch(/bed/i);
    expect(principle).toMatchObject({
      scope: "household",
      provenance: { source: "dream" },
      links: [{ rel: "evidence", targetId: "bedtime" }],
    });
    expect(await up.cortex.metrics.registry.metrics()).toContain(
      'cortex_dream_principle_wordings_total{outcome="worded"} 1',
    );
    // The next cycle reinforces nothing new and asks the model nothing.
    now = day(3);
    expect((await dream(up)).counts).toMatchObject({ principlesCreated: 0, principlesDeferred: 0 });
    expect(await up.cortex.metrics.registry.metrics()).toContain(
      'cortex_dream_principle_wordings_total{outcome="worded"} 1',
    );
  });
});
