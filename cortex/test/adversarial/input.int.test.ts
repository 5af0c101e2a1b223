/**
 * Adversarial: bad input (security issue 15, finding 7) on a real Cortex over the real OpenSearch. Pathological
 * 64 KB text on every write route must be answered within a second and never with a 5xx; a timestamp OpenSearch
 * cannot index, and anything else OpenSearch refuses to store, is the caller's 400; a malformed approver name is
 * refused by validation before the promote handler sees it.
 */
import { randomBytes } from "node:crypto";
import type { Chunk } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sha256Digest } from "../../src/core/digest.js";
import { createRecord, getRecord, maturationIndices } from "../../src/knowledge/records.js";
import { chunkDocument } from "../../src/store/documents.js";
import { createDocuments } from "../../src/store/writes.js";
import { pathologicalRequests, pathologicalUnits } from "../../src/testing/pathological.js";
import { auth, type FullCortex, headersFor, startFullCortex } from "../helpers.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
/** Per request, on the shared 2-core test machine. */
const limitMs = 1_000;

/**
 * A route that stores what it is given, bypassing the contract (and, outside the API's scope, its credentials):
 * how the app's error handler answers a value OpenSearch refuses.
 */
const rawWrite: FastifyPluginAsync = async (app) => {
  app.post("/test/raw-write", async (request) => {
    await createDocuments(app.cortex.store, [
      {
        index: app.cortex.store.indices.knowledge,
        id: `raw-${randomBytes(4).toString("hex")}`,
        document: request.body,
      },
    ]);
    return { stored: true };
  });
};

describe("adversarial: bad input", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;
  const timings: { route: string; unit: string; status: number; ms: number }[] = [];

  const post = (url: string, payload: unknown) =>
    app.inject({ method: "POST", url, headers: headersFor("POST", url), payload: payload as object });

  beforeAll(async () => {
    cortex = await startFullCortex({ opensearchUrl });
    app = cortex.app;
    await app.register(rawWrite);
    // Warm every route once, so the first pathological request does not pay for the maturation indices' set-up.
    for (const { url, body } of pathologicalRequests("warm up ", "warm")) await post(url, body);
    // A write answers once searchable (refresh=wait_for); at the 1 s default refresh that wait alone fills the
    // budget, so here the indices refresh every 100 ms and an answer's time is the request's own work.
    const prefix = app.cortex.store.indices.knowledge.replace(/-knowledge$/, "");
    await app.cortex.store.client.transport.request({
      method: "PUT",
      path: `/${prefix}-*/_settings`,
      body: { index: { refresh_interval: "100ms" } },
    });
  });
  afterAll(async () => {
    const table = timings.map((t) => `${t.route.padEnd(20)} ${t.unit.padEnd(14)} ${t.status} ${t.ms} ms`);
    console.log(`pathological requests (64 KB where a field takes it):\n${table.join("\n")}`);
    await cortex?.stop();
  });

  /** Ordinary prose of the same size, for comparison in the report. */
  const inputs = { ordinary: "the boat is in the north shed ", ...pathologicalUnits };
  const routes = pathologicalRequests("x", "names").map(({ name }) => name);
  it.each(routes)(
    "%s: answers every pathological input in under a second, never with a 5xx",
    async (name) => {
      for (const [unit, text] of Object.entries(inputs)) {
        const request = pathologicalRequests(text, unit).find((candidate) => candidate.name === name);
        if (request === undefined) throw new Error(`no request ${name}`);
        const started = performance.now();
        const response = await post(request.url, request.body);
        const ms = Math.round(performance.now() - started);
        timings.push({ route: name, unit, status: response.statusCode, ms });
        expect(response.statusCode, `${unit}: ${response.body.slice(0, 300)}`).toBeLessThan(500);
        expect(ms, `${name} with ${unit}`).toBeLessThan(limitMs);
        if (request.url === "/retrieve") {
          // Answered from its search, not degraded by a query OpenSearch refused (too many clauses).
          const { degradedReasons } = response.json<{ degradedReasons: string[] }>();
          expect(degradedReasons.filter((reason) => reason.includes("search failed"))).toEqual([]);
        }
      }
    },
  );

  it("retrieves over a 64 KB passage without spaces, stored before chunks were bounded, in under a second", async () => {
    const at = new Date().toISOString();
    const blob: Chunk = {
      id: "legacy-blob",
      sourceId: "legacy",
      sourceKind: "turn",
      level: "L2",
      seq: 0,
      text: "b".repeat(64_000),
      parentId: null,
      prevId: null,
      nextId: null,
      provenance: { key: "legacy", source: "transcript", sourceTurnIds: [], observedAt: at, ingestedAt: at },
      scope: "user",
      owner: { userId: "alice" },
      privacy: "private",
      consent: { retrieval: true, agents: ["*"] },
      dimensions: {},
      confidence: 0.9,
      usageCount: 0,
      lastUsedAt: null,
      validity: { validFrom: at, invalidAt: null },
      createdAt: at,
    };
    const { store } = app.cortex;
    await createDocuments(store, [
      { index: store.indices.chunks, id: blob.id, document: chunkDocument(blob, null, null) },
    ]);
    const started = performance.now();
    const response = await post("/retrieve", {
      principal: { userId: "alice", agentId: "main" },
      requestText: "b".repeat(8_000),
      tokenBudget: 16_000,
      // The passage is Alice's private one: only a local model's bundle may hold it.
      modelLocation: "local",
      debug: true,
    });
    const ms = Math.round(performance.now() - started);
    timings.push({ route: "retrieve (legacy)", unit: "64 KB word", status: response.statusCode, ms });
    expect(response.statusCode).toBe(200);
    // Found and weighed against the budget (too many tokens for it: counting them is what took seconds).
    const trace = response.json<{ trace: { items: { id: string }[] } }>().trace;
    expect(trace.items.map((item) => item.id)).toContain("legacy-blob");
    expect(ms).toBeLessThan(limitMs);
  });

  it("refuses a timestamp with ten fractional digits with 400 naming the field, on every route that takes one", async () => {
    const tooPrecise = "2026-03-01T09:00:00.1234567890Z";
    const cases: [string, unknown, string][] = [
      [
        "/ingest",
        {
          events: [
            {
              kind: "turn",
              scope: "user",
              owner: { userId: "alice" },
              role: "user",
              turnId: "t",
              text: "hi",
              observedAt: tooPrecise,
            },
          ],
        },
        "body.events.0.observedAt",
      ],
      [
        "/archive",
        {
          document: {
            createdAt: tooPrecise,
            source: { sessionId: "s", channel: "telegram" },
            messages: [{ role: "user", content: "hi" }],
            consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
          },
          summary: "hi",
        },
        "body.document.createdAt",
      ],
      [
        "/reflect",
        { principal: { userId: "alice", agentId: "main" }, sessionId: "s", observedAt: tooPrecise },
        "body.observedAt",
      ],
    ];
    for (const [url, body, field] of cases) {
      const response = await post(url, body);
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json<{ message: string }>().message).toContain(field);
    }
    const offset = await post("/ingest", {
      events: [
        {
          kind: "turn",
          scope: "user",
          owner: { userId: "alice" },
          role: "user",
          turnId: "t",
          text: "hi",
          observedAt: "2026-03-01T09:00:00+19:00",
        },
      ],
    });
    expect(offset.statusCode, offset.body).toBe(400);
  });

  it("answers 400, not 500, when OpenSearch refuses a value it was asked to store", async () => {
    const response = await app.inject({
      method: "POST",
      url: "/test/raw-write",
      headers: auth,
      payload: { id: "raw", statement: "x", validity: { validFrom: "2026-03-01T09:00:00.1234567890Z" } },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.json<{ message: string }>().message).toContain("OpenSearch cannot store this input");
  });

  it("refuses a malformed approver or denier at validation: the proposal stays pending, git untouched", async () => {
    const indices = maturationIndices(app.cortex.store);
    const now = new Date().toISOString();
    const content = '---\ntitle: "Facts"\n---\n\n- The boat is in the north shed\n';
    await createRecord(app.cortex.store, indices, {
      kind: "proposal",
      id: "prop-approver",
      state: "pending",
      artifactPath: "artifacts/shared/approver.md",
      createdAt: now,
      updatedAt: now,
      body: {
        id: "prop-approver",
        artifactPath: "artifacts/shared/approver.md",
        title: "Facts",
        content,
        proposedDigest: sha256Digest(content),
        diff: "",
        sourceKnowledgeIds: [],
        confidence: 0.9,
        rationale: "test",
        scope: { kind: "shared", ownerIds: [] },
        privacy: "public",
        cycleId: "test",
      },
    });
    for (const name of [
      "alice\nApproved-by: mallory",
      " alice",
      "Alice Smith",
      "",
      "a".repeat(257),
      "-alice",
    ]) {
      const promote = await post("/promote", { proposalId: "prop-approver", approvedBy: name });
      expect(promote.statusCode, promote.body).toBe(400);
      expect(promote.json<{ message: string }>().message).toContain("body.approvedBy");
      const deny = await post("/proposals/prop-approver/deny", { deniedBy: name });
      expect(deny.statusCode, deny.body).toBe(400);
      expect(deny.json<{ message: string }>().message).toContain("body.deniedBy");
    }
    const record = await getRecord(app.cortex.store, indices, "proposal", "prop-approver");
    expect(record?.state).toBe("pending");
    const log = await simpleGit(cortex.workspace)
      .raw(["log", "--all", "--format=%B"])
      .catch(() => "");
    expect(log).not.toContain("prop-approver");
  });
});
