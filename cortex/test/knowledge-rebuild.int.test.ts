import type { MigrationStatus } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterEach, describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import { createStore, request } from "../src/store/client.js";
import { aliasedIndices } from "../src/store/generations.js";
import { concreteIndex } from "../src/store/templates.js";
import { downgradeKnowledgeIndex } from "../src/testing/previous-knowledge-index.js";
import {
  adminAuth,
  dropIndices,
  ingestEvents,
  knowledgeEvent,
  operatorAuth,
  retrieveFor,
  startCortex,
} from "./helpers.js";

// REMRAM_TESTBED=opensearch. An upgrade from the release before knowledge template 4 (statements analysed without
// accent folding): the knowledge index is rebuilt beside the old one after start-up, reads served throughout,
// writes held with 503, the alias moved at the end; a Cortex stopped halfway starts the copy over; the old index
// is kept for a rollback until an admin confirms or the retention passes. Costs about 20 s.
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ana = { userId: "ana", householdId: "h1", agentId: "main" };
const statements = [
  "Ana's sister lives in Tromsø and visits every summer",
  "The spare house key hangs behind the fuse box",
  "Ana takes her coffee at the café on Mill Road",
  "The boiler is serviced every October by Jensen Heating",
  "Ana waters the tomatoes every second morning",
  "The wifi password for guests is on the fridge magnet",
];
// Enough documents that a throttled copy takes a few seconds.
const filler = Array.from({ length: 34 }, (_, n) => `Ana noted grocery list item number ${n}: oat milk`);

const recall = async (app: FastifyInstance, requestText: string) =>
  (await retrieveFor(app, { principal: ana, requestText, modelLocation: "local", tokenBudget: 600 })).facts
    .map((fact) => fact.statement)
    .join("\n");

/** A Cortex of the previous release: its data written, then its knowledge index put back to template 3. */
async function previousRelease(): Promise<{ prefix: string; previousIndex: string; documents: number }> {
  const app = await startCortex({ opensearchUrl });
  await ingestEvents(
    app,
    [...statements, ...filler].map((statement, n) => knowledgeEvent("ana", `fact-${n}`, statement)),
  );
  const { store } = app.cortex;
  const previousIndex = await downgradeKnowledgeIndex(store);
  const { body } = await request<{ count: number }>(store, "GET", `/${previousIndex}/_count`);
  await app.close();
  return { prefix: store.indices.knowledge.replace(/-knowledge$/, ""), previousIndex, documents: body.count };
}

describe("an upgrade that rebuilds the knowledge index", () => {
  const started: FastifyInstance[] = [];
  const start = async (indexPrefix: string, overrides: Record<string, unknown> = {}) => {
    const app = await startCortex({ opensearchUrl, indexPrefix, rebuildRetryMs: 200, ...overrides });
    started.push(app);
    return app;
  };
  afterEach(async () => {
    const last = started.at(-1);
    if (last !== undefined) {
      const { client, indices } = last.cortex.store;
      await client.transport.request(
        { method: "DELETE", path: `/${indices.knowledge}-v*` },
        { ignore: [404] },
      );
      await dropIndices(last);
    }
    for (const app of started.splice(0)) await app.close();
  });
  const migrations = async (app: FastifyInstance) => {
    const response = await app.inject({ method: "GET", url: "/admin/migrations", headers: operatorAuth });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<MigrationStatus>();
  };
  const current = (app: FastifyInstance) =>
    waitFor(async () => ((await migrations(app)).state === "current" ? migrations(app) : undefined), {
      what: "the knowledge index rebuilt",
      timeoutMs: 60_000,
      intervalMs: 200,
    });

  it("builds the new index beside the old one, answers reads and holds writes meanwhile, then moves the alias", async () => {
    const { prefix, previousIndex, documents } = await previousRelease();
    // Five documents a second: the copy of 40 takes about 8 s, long enough to look at it.
    const app = await start(prefix, { rebuildDocsPerSecond: 5 });
    const { store } = app.cortex;
    const running = await waitFor(
      async () => {
        const status = await migrations(app);
        return status.state === "rebuilding" && (status.rebuild?.total ?? 0) > 0 ? status : undefined;
      },
      { what: "the rebuild running", timeoutMs: 20_000, intervalMs: 100 },
    );
    expect(running.rebuild).toMatchObject({
      from: previousIndex,
      to: concreteIndex(store.indices.knowledge),
      fromTemplateVersion: 3,
      total: documents,
    });
    // Reads come from the old index, as it was analysed: no accent folding yet.
    expect(await recall(app, "Where does Ana's sister live?")).toContain("Tromsø");
    expect(await recall(app, "Tromso")).not.toContain("Tromsø");
    const ingest = await ingestEvents(app, [knowledgeEvent("ana", "held", "Ana's car is blue")]).catch(
      (error: Error) => error,
    );
    expect(ingest).toBeInstanceOf(Error);
    expect(String(ingest)).toMatch(
      /503.*rebuilding its knowledge index after an upgrade \(\d+ of \d+ copied\)/,
    );

    const done = await current(app);
    expect(done.rebuild).toMatchObject({ total: documents, copied: documents });
    expect(done.rebuild?.finishedAt).toBeDefined();
    expect(await aliasedIndices(store, store.indices.knowledge)).toEqual([
      concreteIndex(store.indices.knowledge),
    ]);
    // The same documents, now analysed with folding: "Tromso" and "cafe" find what was written with accents.
    expect(await recall(app, "Tromso")).toContain("Tromsø");
    expect(await recall(app, "cafe on Mill Road")).toContain("café on Mill Road");
    expect(await recall(app, "When is the boiler serviced?")).toContain("Jensen Heating");
    // Writes are accepted again and land in the new index.
    expect(
      (await ingestEvents(app, [knowledgeEvent("ana", "after", "Ana's bike is in Ålesund")])).created,
    ).toBe(1);
    expect(await recall(app, "Alesund")).toContain("Ålesund");

    // The old index is kept for a rollback, write-blocked, and says nothing changed in it.
    expect(done.kept).toEqual([
      {
        index: previousIndex,
        replacedBy: concreteIndex(store.indices.knowledge),
        replacedAt: expect.any(String),
        deleteAfter: expect.any(String),
      },
    ]);
    const { body: count } = await request<{ count: number }>(store, "GET", `/${previousIndex}/_count`);
    expect(count.count).toBe(documents);
    const blocked = await request(store, "POST", `/${previousIndex}/_doc`, { statement: "x" }).catch(
      (error: Error) => error,
    );
    expect(String(blocked)).toMatch(/cluster_block_exception|blocked/);

    // Only an admin confirms; then the kept index is gone.
    const byOperator = await app.inject({
      method: "POST",
      url: "/admin/migrations/confirm",
      headers: operatorAuth,
    });
    expect(byOperator.statusCode).toBe(403);
    const confirmed = await app.inject({
      method: "POST",
      url: "/admin/migrations/confirm",
      headers: adminAuth,
    });
    expect(confirmed.statusCode, confirmed.body).toBe(200);
    expect(confirmed.json()).toEqual({ deleted: [previousIndex] });
    expect((await migrations(app)).kept).toEqual([]);
    const gone = await request(store, "HEAD", `/${previousIndex}`, undefined, { ignore: [404] });
    expect(gone.statusCode).toBe(404);
  }, 120_000);

  it("starts the copy over after a Cortex stopped halfway, cancelling the task it left, and sweeps the old index after the retention", async () => {
    const { prefix, previousIndex, documents } = await previousRelease();
    const slow = await start(prefix, { rebuildDocsPerSecond: 1 });
    const target = concreteIndex(slow.cortex.store.indices.knowledge);
    const task = await waitFor(
      async () => {
        const { statusCode, body } = await request<
          Record<string, { mappings: { _meta?: { rebuildTask?: string } } }>
        >(slow.cortex.store, "GET", `/${target}/_mapping`, undefined, { ignore: [404] });
        return statusCode === 200 ? body[target]?.mappings._meta?.rebuildTask : undefined;
      },
      { what: "the copy's task recorded", timeoutMs: 20_000, intervalMs: 100 },
    );
    await slow.close();
    started.splice(started.indexOf(slow), 1);
    // The task outlived the process that started it.
    const outside = createStore({ url: opensearchUrl, indexPrefix: prefix, embedDimensions: 384 });
    const { body: left } = await request<{ completed: boolean }>(outside, "GET", `/_tasks/${task}`);
    await outside.client.close();
    expect(left.completed).toBe(false);

    const next = await start(prefix, { rebuiltIndexKeepDays: 0 });
    const done = await current(next);
    expect(done.rebuild).toMatchObject({
      from: previousIndex,
      to: target,
      total: documents,
      copied: documents,
    });
    const { body: cancelled } = await request<{ completed: boolean; error?: { type?: string } }>(
      next.cortex.store,
      "GET",
      `/_tasks/${task}`,
    );
    expect(cancelled.completed).toBe(true);
    const { body: count } = await request<{ count: number }>(next.cortex.store, "GET", `/${target}/_count`);
    expect(count.count).toBe(documents);
    // No retention: the sweep that follows the rebuild (in the background: writes do not wait for it) deletes it.
    await waitFor(
      async () => {
        const gone = await request(next.cortex.store, "HEAD", `/${previousIndex}`, undefined, {
          ignore: [404],
        });
        return gone.statusCode === 404 ? true : undefined;
      },
      { what: "the old index deleted by the sweep", timeoutMs: 20_000, intervalMs: 200 },
    );
    expect((await migrations(next)).kept).toEqual([]);
    expect(await recall(next, "Tromso")).toContain("Tromsø");
  }, 120_000);

  it("leaves an index of the current template alone", async () => {
    const app = await start(`it-cur-${Date.now().toString(36)}`);
    const status = await current(app);
    expect(status.rebuild).toBeUndefined();
    expect(status.kept).toEqual([]);
    expect((await ingestEvents(app, [knowledgeEvent("ana", "k", "Ana likes rhubarb")])).created).toBe(1);
  }, 60_000);
});
