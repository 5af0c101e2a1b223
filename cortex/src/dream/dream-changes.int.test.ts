import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { DimensionsResponse, DreamReportResponse, KnowledgeObject } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp } from "../app.js";
import { cortexConfig } from "../config.js";
import { maturationIndices } from "../knowledge/records.js";
import { loadObjects, writeObjects } from "../knowledge/repository.js";
import { maturationPlugin } from "../maturation.js";
import { request } from "../store/client.js";
import { recordCandidateDimensions } from "../store/counters.js";
import { headersFor, testCredentials } from "../testing/callers.js";
import { storedObject } from "../testing/fixtures.js";

const day = (n: number) => new Date(Date.UTC(2026, 5, 1, 9) + n * 86_400_000).toISOString();

/**
 * What a dream cycle changes, on a real OpenSearch through real Cortex routes: near-duplicates merged with their
 * provenance, contradictions read from claims, candidate dimensions promoted into the registry, decay — each
 * counted in the report and in /metrics. Objects are stored through the repository (the path reflection and
 * ingest write through), so each case states exactly what dream starts from.
 */
describe("a dream cycle's changes on a real OpenSearch", () => {
  const opensearch = testbedEndpoints("opensearch");
  let app: FastifyInstance;
  let scratch: string;
  let now = day(0);

  const object = (id: string, at: string, overrides: Partial<KnowledgeObject>): KnowledgeObject =>
    storedObject({
      id,
      provenance: {
        key: `it:${id}`,
        source: "reflection",
        sourceTurnIds: [`turn-${id}`],
        observedAt: at,
        ingestedAt: at,
      },
      lastReinforcedAt: at,
      validity: { validFrom: at, invalidAt: null },
      createdAt: at,
      updatedAt: at,
      ...overrides,
    });
  const store = (objects: KnowledgeObject[]) =>
    writeObjects(
      app.cortex.store,
      objects.map((o) => ({ object: o, embedding: null, embeddingModel: null })),
      [],
    );
  const dream = async (): Promise<DreamReportResponse> => {
    const response = await app.inject({
      method: "POST",
      url: "/dream",
      headers: headersFor("POST", "/dream"),
      payload: {},
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<DreamReportResponse>();
  };
  const dimensions = async () =>
    (
      await app.inject({ method: "GET", url: "/dimensions", headers: headersFor("GET", "/dimensions") })
    ).json<DimensionsResponse>();
  const stored = async (...ids: string[]) => loadObjects(app.cortex.store, ids);

  beforeAll(async () => {
    scratch = await mkdtemp(join(tmpdir(), "remram-dream-changes-"));
    app = await buildApp({
      config: cortexConfig.parse({
        credentials: testCredentials,
        opensearchUrl: opensearch.url,
        indexPrefix: `it-dream-${randomBytes(4).toString("hex")}`,
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

  it("merges, resolves claims, promotes a dimension and decays in one cycle, and counts each", async () => {
    now = day(0);
    await store([
      // The same remark, saved twice (two explicit saves the same evening): one object, both sources kept.
      object("key-1", day(0), {
        statement: "The spare key is under the blue pot",
        sessionIds: ["s1"],
        confidence: 0.7,
        dimensions: { place: ["garden"] },
      }),
      object("key-2", day(0), {
        statement: "the spare key is under the blue pot",
        sessionIds: ["s2"],
        confidence: 0.6,
        dimensions: { place: ["porch"] },
      }),
      // Claims on the same subject and object whose predicates are opposites: the newer wins.
      object("jazz-old", day(-20), {
        statement: "Alice likes jazz",
        scope: "user",
        owner: { userId: "alice" },
        claim: { subject: "alice", predicate: "likes", object: "jazz" },
        confidence: 0.6,
      }),
      object("jazz-new", day(-1), {
        statement: "Alice has gone off jazz",
        scope: "user",
        owner: { userId: "alice" },
        claim: { subject: "alice", predicate: "does not like", object: "jazz" },
        confidence: 0.55,
      }),
      // A candidate dimension on confident objects, reported often enough.
      object("zone-1", day(0), {
        statement: "The roses grow in the north bed",
        dimensions: { garden_zone: ["north"] },
        confidence: 0.8,
      }),
      object("zone-2", day(0), {
        statement: "The herbs grow in the south bed",
        dimensions: { garden_zone: ["south"] },
        confidence: 0.8,
      }),
      // Idle for two months: it decays.
      object("idle", day(-60), { statement: "The plumber came on a Tuesday", confidence: 0.5 }),
    ]);
    await recordCandidateDimensions(
      app.cortex.store,
      new Map([["garden_zone", { occurrences: 3, values: ["north", "south"] }]]),
      day(0),
    );
    // Counting does not wait for a refresh (reflection's path); the cycle must see the count.
    await request(app.cortex.store, "POST", `/${app.cortex.store.indices.dimensions}/_refresh`);
    const policyBefore = (await dimensions()).appliedHash;

    const report = await dream();
    expect(report.counts).toMatchObject({
      duplicatesMerged: 1,
      contradictionsDetected: 1,
      contradictionsResolved: 1,
      invalidated: 2,
      dimensionsPromoted: 1,
    });
    expect(report.counts.decayed).toBeGreaterThanOrEqual(1);
    expect(report.merges).toEqual([{ survivorId: "key-1", mergedIds: ["key-2"] }]);

    const after = await stored("key-1", "key-2", "jazz-old", "jazz-new", "idle");
    expect(after.get("key-1")).toMatchObject({
      status: "active",
      sessionIds: ["s1", "s2"],
      provenance: { sourceTurnIds: ["turn-key-1", "turn-key-2"] },
      dimensions: { place: ["garden", "porch"] },
      links: [{ rel: "supersedes", targetId: "key-2" }],
    });
    // Merged, not deleted: still stored, its validity ended, pointing at the survivor.
    expect(after.get("key-2")).toMatchObject({
      status: "invalidated",
      validity: { invalidAt: day(0) },
      links: [{ rel: "supersededBy", targetId: "key-1" }],
    });
    expect(after.get("jazz-old")).toMatchObject({
      status: "invalidated",
      links: [{ rel: "supersededBy", targetId: "jazz-new" }],
    });
    expect(after.get("jazz-new")?.status).toBe("active");
    expect(after.get("idle")?.confidence).toBeLessThan(0.5);

    // The registry: canonical now, no longer a candidate; the operator's policy (and its hash) untouched.
    const registry = await dimensions();
    expect(registry.promoted).toEqual([
      expect.objectContaining({
        name: "garden_zone",
        occurrences: 3,
        meanConfidence: 0.8,
        cycleId: report.cycleId,
      }),
    ]);
    expect(registry.candidates.map((c) => c.name)).not.toContain("garden_zone");
    expect(registry.appliedHash).toBe(policyBefore);

    const metrics = await app.cortex.metrics.registry.metrics();
    expect(metrics).toContain('cortex_dream_changes_total{count="duplicatesMerged"} 1');
    expect(metrics).toContain('cortex_dream_last_counts{count="dimensionsPromoted"} 1');
  });

  it("changes nothing more on the next cycle: merged stays merged, a registered dimension is not promoted again", async () => {
    now = day(1);
    const report = await dream();
    expect(report.counts).toMatchObject({
      duplicatesMerged: 0,
      contradictionsDetected: 0,
      invalidated: 0,
      dimensionsPromoted: 0,
    });
    expect(report.merges).toEqual([]);
    expect((await dimensions()).promoted).toHaveLength(1);
  });
});
