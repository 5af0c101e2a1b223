import type { RetrieveResponse, StorageStatus } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request } from "../src/store/client.js";
import {
  auth,
  type FullCortex,
  ingestEvents,
  knowledgeEvent,
  operatorAuth,
  startFullCortex,
} from "./helpers.js";

// REMRAM_TESTBED=opensearch. Past its flood-stage watermark OpenSearch puts the read-only-allow-delete block on
// every index of the node and lifts it once the disk is below the high watermark again. Here the block is put on
// this Cortex's own indices only (the shared test bed's disk is not filled): writes are refused with 507 naming
// the cause, reads go on, and nothing acknowledged is lost; once the block goes, the caller's retry is stored.
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ana = { userId: "ana", householdId: "h1", agentId: "main" };

describe("Cortex while OpenSearch's disk is past its flood-stage watermark", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;
  const block = async (on: boolean) => {
    const { knowledge } = app.cortex.store.indices;
    const prefix = knowledge.replace(/-knowledge$/, "");
    await request(app.cortex.store, "PUT", `/${prefix}-*/_settings`, {
      index: { blocks: { read_only_allow_delete: on ? true : null } },
    });
  };
  const ingest = (events: unknown[]) =>
    app.inject({ method: "POST", url: "/ingest", headers: auth, payload: { events } });
  const statements = async () => {
    const response = await app.inject({
      method: "POST",
      url: "/retrieve",
      headers: auth,
      payload: {
        principal: ana,
        requestText: "what does Ana grow",
        tokenBudget: 800,
        modelLocation: "local",
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<RetrieveResponse>().facts.map((fact) => fact.statement);
  };
  const refusals = async () => {
    const text = (await app.inject({ method: "GET", url: "/metrics" })).body;
    return text
      .split("\n")
      .filter((line) => line.startsWith("cortex_volume_full_refusals_total{"))
      .reduce((sum, line) => sum + Number(line.split(" ").at(-1)), 0);
  };

  const storage = async () => {
    const response = await app.inject({ method: "GET", url: "/admin/storage", headers: operatorAuth });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<StorageStatus>();
  };

  beforeAll(async () => {
    cortex = await startFullCortex({ opensearchUrl });
    app = cortex.app;
    await ingestEvents(app, [knowledgeEvent("ana", "ana-tomatoes", "Ana grows tomatoes on the balcony")]);
  }, 120_000);
  afterAll(async () => {
    if (app !== undefined) await block(false).catch(() => undefined);
    await cortex?.stop();
  });

  it("refuses writes with 507 naming the watermark, keeps answering reads, and stores the retry once freed", async () => {
    await block(true);
    const basil = [knowledgeEvent("ana", "ana-basil", "Ana grows basil on the kitchen window")];
    const refused = await ingest(basil);
    expect(refused.statusCode, refused.body).toBe(507);
    expect(refused.headers["retry-after"]).toBe("5");
    expect(refused.json<{ message: string }>().message).toMatch(
      /^OpenSearch's disk is past its flood-stage watermark, so nothing was stored; free space on it and retry/,
    );
    expect(await refusals()).toBeGreaterThan(0);
    // What the operator's StorageAvailable condition is made from: the block, and the refusal with its cause.
    const full = await storage();
    expect(full.opensearch.writeBlocked).toBe(true);
    expect(full.recentRefusal).toMatchObject({ cause: "opensearch" });
    expect(full.recentRefusal?.message).toMatch(/^OpenSearch's disk is past its flood-stage watermark/);
    expect(full.opensearch.floodStageWatermark).toMatch(/%|b$/);
    expect(full.opensearch.diskUsedPercent).toBeGreaterThan(0);
    expect(full.volumes.map((volume) => volume.name).sort()).toEqual(["archive", "workspace"]);
    // Reads go on: what was stored before answers, and nothing of the refused write shows.
    const during = await statements();
    expect(during).toContain("Ana grows tomatoes on the balcony");
    expect(during).not.toContain("Ana grows basil on the kitchen window");

    // Space freed: OpenSearch lifts the block itself; the gateway's queue sends the same event again.
    await block(false);
    expect((await storage()).opensearch.writeBlocked).toBe(false);
    const stored = await ingest(basil);
    expect(stored.statusCode, stored.body).toBe(200);
    // A write stored since: writes are no longer refused.
    expect((await storage()).recentRefusal).toBeUndefined();
    expect(await statements()).toEqual(
      expect.arrayContaining(["Ana grows tomatoes on the balcony", "Ana grows basil on the kitchen window"]),
    );
  }, 120_000);
});
