// Over 400 lines on purpose: Cortex's HTTP surface end to end against one real OpenSearch started once for the file
// (ingest, retrieve, dimensions, auth, degradation); splitting it would start that OpenSearch again per part.
import {
  bundleClose,
  bundleLiveStateNote,
  bundleOpen,
  bundlePreamble,
  type KnowledgeObject,
  type Principal,
} from "@remram/contract";
import { startOpenSearch } from "@remram/test-harness";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import fc from "fast-check";
import type { FastifyInstance } from "fastify";
import { countTokens } from "gpt-tokenizer";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { knowledgeDocument } from "../src/store/documents.js";
import { createDocuments } from "../src/store/writes.js";
import {
  auth,
  deadUrl,
  dropIndices,
  ingestEvents,
  operatorAuth,
  retrieveFor,
  startCortex,
} from "./helpers.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ana = { scope: "user", owner: { userId: "ana", householdId: "home" } } as const;
const anaPrincipal = { userId: "ana", householdId: "home", agentId: "main" };

describe("Cortex on a real OpenSearch (lexical retrieval)", () => {
  let app: FastifyInstance;

  beforeAll(async () => {
    app = await startCortex({ opensearchUrl });
  });
  afterAll(async () => {
    await dropIndices(app);
    await app.close();
  });

  it("stores an event once per provenance key and reports the repeat as a duplicate", async () => {
    const event = {
      kind: "knowledge",
      ...ana,
      provenanceKey: "idem-1",
      statement: "The garage door code changed in May",
      type: "fact",
    };
    const first = await ingestEvents(app, [event]);
    const second = await ingestEvents(app, [event, { ...event }]);
    expect(first.items.map((item) => item.status)).toEqual(["created"]);
    expect(second.items.map((item) => item.status)).toEqual(["duplicate", "duplicate"]);
    expect(second.duplicates).toBe(2);
    const count = await app.cortex.store.client.count({
      index: app.cortex.store.indices.knowledge,
      body: { query: { term: { "provenance.key": "idem-1" } } },
    });
    expect(count.body.count).toBe(1);
  });

  it("creates exactly one object when the same key arrives in many concurrent requests", async () => {
    const event = {
      kind: "knowledge",
      ...ana,
      provenanceKey: "race-1",
      statement: "The heat pump was serviced",
      type: "fact",
    };
    const answers = await Promise.all(Array.from({ length: 8 }, () => ingestEvents(app, [event])));
    expect(answers.filter((answer) => answer.created === 1)).toHaveLength(1);
    expect(answers.filter((answer) => answer.duplicates === 1)).toHaveLength(7);
  });

  it("redacts secrets before they reach the index", async () => {
    const answer = await ingestEvents(app, [
      {
        kind: "tool_result",
        ...ana,
        sessionId: "s-red",
        tool: "shell",
        output: "ssh admin@10.20.30.40 with password=hunter2 token ghp_abcdefghijklmnopqrstuvwxyz0123",
      },
    ]);
    expect(answer.items[0]?.redactions).toBe(3);
    const id = answer.items[0]?.ids[0] ?? "";
    const stored = await app.cortex.store.client.get({ index: app.cortex.store.indices.chunks, id });
    const text = JSON.stringify(stored.body._source);
    expect(text).not.toContain("hunter2");
    expect(text).not.toContain("10.20.30.40");
    expect(text).not.toContain("ghp_");
    expect(text).toContain("<SERVER_IP>");
  });

  it("acknowledges only what is already searchable", async () => {
    await ingestEvents(app, [
      {
        kind: "knowledge",
        ...ana,
        statement: "Ana waters the orchids every Sunday",
        type: "fact",
        confidence: 0.9,
      },
    ]);
    const answer = await retrieveFor(app, {
      principal: anaPrincipal,
      requestText: "orchids watering",
      tokenBudget: 300,
    });
    expect(answer.facts.map((fact) => fact.statement)).toContain("Ana waters the orchids every Sunday");
  });

  it("keeps the bundle under the token budget, identical across calls, in fixed sections", async () => {
    const events = Array.from({ length: 30 }, (_, index) => ({
      kind: "knowledge",
      ...ana,
      statement: `Backup rule ${index}: the nightly backup of volume ${index} keeps ${index + 3} snapshots`,
      type: index % 3 === 0 ? "constraint" : "fact",
      confidence: 0.5 + (index % 5) / 10,
    }));
    await ingestEvents(app, events);
    for (const tokenBudget of [16, 40, 120, 600]) {
      const request = {
        principal: anaPrincipal,
        requestText: "how many backup snapshots are kept",
        tokenBudget,
      };
      const first = await retrieveFor(app, request);
      const second = await retrieveFor(app, request);
      expect(countTokens(first.bundle.text)).toBeLessThanOrEqual(tokenBudget);
      expect(first.bundle.tokens).toBe(countTokens(first.bundle.text));
      expect(second.bundle.text).toBe(first.bundle.text);
      if (tokenBudget === 600) {
        const head = [bundleOpen, ...bundlePreamble, "## constraints", ""].join("\n");
        expect(first.bundle.text.startsWith(head)).toBe(true);
        expect(first.bundle.text.endsWith(`\n${bundleClose}`)).toBe(true);
      }
    }
  });

  it("answers a live-state question with dated history under a live-check instruction (LIVE > RAW > DERIVED)", async () => {
    await ingestEvents(app, [
      {
        kind: "knowledge",
        ...ana,
        statement: "The backup job runs on the NAS every night",
        type: "fact",
        confidence: 0.9,
        observedAt: "2026-05-03T21:00:00.000Z",
      },
    ]);
    const ask = (requestText: string, intent?: string) =>
      retrieveFor(app, {
        principal: anaPrincipal,
        requestText,
        ...(intent !== undefined && { intent }),
        tokenBudget: 400,
      });
    const line = "- The backup job runs on the NAS every night (confidence 0.90";
    const live = await ask("is the backup job on the NAS running right now?");
    expect(live.liveState).toEqual({ detected: true, reason: 'phrase "right now"' });
    for (const sentence of bundleLiveStateNote) expect(live.bundle.text).toContain(sentence);
    expect(live.bundle.text).toContain(`${line}; learned 2026-05-03)`);
    expect(live.bundle.tokens).toBe(countTokens(live.bundle.text));
    expect(live.bundle.tokens).toBeLessThanOrEqual(400);

    // The intent the hooks send decides: a neutral question asked as live state, a live one asked as recall.
    const asLive = await ask("tell me about the backup job on the NAS", "live_state");
    expect(asLive.liveState.detected).toBe(true);
    expect(asLive.bundle.text).toContain(`${line}; learned 2026-05-03)`);
    const asRecall = await ask("is the backup job on the NAS running right now?", "recall");
    expect(asRecall.liveState.detected).toBe(false);
    expect(asRecall.bundle.text).toContain(`${line})`);
    expect(asRecall.bundle.text).not.toContain(bundleLiveStateNote[0]);

    // A live-state question nothing in memory answers still gets the instruction to check.
    const nothing = await ask("is the zebra-crossing-lamp currently blinking?");
    expect(nothing.facts).toEqual([]);
    expect(nothing.bundle.text).toContain(bundleLiveStateNote[1]);
  });

  it("answers 401 without the bearer token and leaves health and readiness open", async () => {
    const denied = await app.inject({ method: "POST", url: "/retrieve", payload: {} });
    expect(denied.statusCode).toBe(401);
    const wrong = await app.inject({
      method: "GET",
      url: "/dimensions",
      headers: { authorization: "Bearer nope" },
    });
    expect(wrong.statusCode).toBe(401);
    expect((await app.inject({ method: "GET", url: "/healthz" })).statusCode).toBe(200);
    const ready = await app.inject({ method: "GET", url: "/readyz" });
    expect(ready.statusCode).toBe(200);
    expect(ready.json()).toEqual({
      ready: true,
      checks: { opensearch: true, indices: true, embeddingModel: "not_configured" },
    });
  });

  it("answers 400 naming the offending field, and 413 or 400 with the limit for oversized input", async () => {
    const bad = await app.inject({
      method: "POST",
      url: "/ingest",
      headers: auth,
      payload: { events: [{ kind: "knowledge", scope: "user", owner: {}, statement: "x", type: "fact" }] },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("body.events.0.owner: scope 'user' needs owner.userId");
    const badType = await app.inject({
      method: "POST",
      url: "/retrieve",
      headers: auth,
      payload: { principal: anaPrincipal, requestText: "x", tokenBudget: "many" },
    });
    expect(badType.statusCode).toBe(400);
    expect(badType.json().message).toContain("body.tokenBudget");
    const tooMany = await app.inject({
      method: "POST",
      url: "/ingest",
      headers: auth,
      payload: {
        events: Array.from({ length: 257 }, (_, index) => ({
          kind: "turn",
          ...ana,
          role: "user",
          turnId: `t${index}`,
          text: "hi",
        })),
      },
    });
    expect(tooMany.statusCode).toBe(413);
    expect(tooMany.json().message).toContain("at most 256");
    const budget = await app.inject({
      method: "POST",
      url: "/retrieve",
      headers: auth,
      payload: { principal: anaPrincipal, requestText: "x", tokenBudget: 100_000 },
    });
    expect(budget.statusCode).toBe(400);
    expect(budget.json().message).toContain("16..16000");
  });

  it("stores a dimension policy, reports its hash and counts unknown dimensions as candidates", async () => {
    const put = await app.inject({
      method: "PUT",
      url: "/dimensions",
      headers: operatorAuth,
      payload: { dimensions: [{ name: "project" }, { name: "person" }], retrievalWeights: { bm25: 1.5 } },
    });
    expect(put.statusCode).toBe(200);
    const { appliedHash } = put.json<{ appliedHash: string }>();
    await ingestEvents(app, [
      {
        kind: "knowledge",
        ...ana,
        statement: "The boat needs new sails",
        type: "fact",
        dimensions: { vessel: ["Tern"], project: ["boat"] },
      },
    ]);
    // Candidate counting happens after the acknowledgement.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    const got = await app.inject({ method: "GET", url: "/dimensions", headers: operatorAuth });
    const body = got.json<{
      appliedHash: string;
      policy: { retrievalWeights: { bm25: number } };
      candidates: { name: string; occurrences: number }[];
    }>();
    expect(body.appliedHash).toBe(appliedHash);
    expect(body.policy.retrievalWeights.bm25).toBe(1.5);
    expect(body.candidates.map((candidate) => candidate.name)).toContain("vessel");
    expect(body.candidates.map((candidate) => candidate.name)).not.toContain("project");
  });

  it("serves the OpenAPI description and Prometheus metrics", async () => {
    const docs = await app.inject({ method: "GET", url: "/docs/json" });
    expect(Object.keys(docs.json<{ paths: object }>().paths)).toEqual(
      expect.arrayContaining(["/ingest", "/retrieve", "/dimensions"]),
    );
    const metrics = await app.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toContain("cortex_http_request_duration_seconds_bucket");
    expect(metrics.body).toContain('cortex_ingest_items_total{kind="knowledge",status="duplicate"}');
    expect(metrics.body).toMatch(/cortex_knowledge_objects\{type="fact",status="active"\} \d+/);
  });

  it("writes usage counters when the tracker flushes, not on the request path", async () => {
    const answer = await retrieveFor(app, {
      principal: anaPrincipal,
      requestText: "orchids",
      tokenBudget: 200,
    });
    const id = answer.facts[0]?.id ?? "";
    const before = await app.cortex.store.client.get({ index: app.cortex.store.indices.knowledge, id });
    await app.cortex.usage.flush();
    const after = await app.cortex.store.client.get({ index: app.cortex.store.indices.knowledge, id });
    expect(after.body._source?.usageCount).toBeGreaterThan(before.body._source?.usageCount ?? 0);
  });
});

describe("Cortex when its services are down", () => {
  it("answers /retrieve 200 degraded with an empty bundle within the time limit when OpenSearch is unreachable", async () => {
    const { buildApp } = await import("../src/app.js");
    const { cortexConfig } = await import("../src/config.js");
    const app = await buildApp({
      config: cortexConfig.parse({
        opensearchUrl: deadUrl,
        credentials: { gateway: "t".repeat(20) },
        logLevel: "silent",
        retrieveTimeoutMs: 500,
      }),
      logger: false,
    });
    try {
      const started = Date.now();
      const response = await app.inject({
        method: "POST",
        url: "/retrieve",
        headers: { authorization: `Bearer ${"t".repeat(20)}` },
        payload: { principal: anaPrincipal, requestText: "anything", tokenBudget: 200 },
      });
      expect(response.statusCode).toBe(200);
      expect(response.json()).toMatchObject({ degraded: true, bundle: { text: "", tokens: 0 }, facts: [] });
      expect(Date.now() - started).toBeLessThan(3_000);
      const ingest = await app.inject({
        method: "POST",
        url: "/ingest",
        headers: { authorization: `Bearer ${"t".repeat(20)}` },
        payload: { events: [{ kind: "turn", ...ana, role: "user", turnId: "t", text: "hello" }] },
      });
      expect(ingest.statusCode).toBe(503);
      expect(ingest.headers["retry-after"]).toBe("5");
      // Refused before it reaches OpenSearch: a write ahead of the index set-up would auto-create a bare index.
      expect(ingest.json<{ message: string }>().message).toMatch(/setting up its OpenSearch indices/);
      expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(503);
    } finally {
      await app.close();
    }
  });

  it("falls back to lexical retrieval, flagged degraded, when Ollama is unreachable", async () => {
    const app = await startCortex({ opensearchUrl, ollamaUrl: deadUrl, embedTimeoutMs: 300 });
    try {
      const ingested = await ingestEvents(app, [
        { kind: "knowledge", ...ana, statement: "The sourdough starter lives in the fridge", type: "fact" },
      ]);
      expect(ingested.embedded).toBe(false);
      const answer = await retrieveFor(app, {
        principal: anaPrincipal,
        requestText: "where is the sourdough starter",
        tokenBudget: 200,
      });
      expect(answer.degraded).toBe(true);
      expect(answer.degradedReasons.join(" ")).toContain("lexical only");
      expect(answer.facts.map((fact) => fact.statement)).toEqual([
        "The sourdough starter lives in the fridge",
      ]);
    } finally {
      await dropIndices(app);
      await app.close();
    }
  });
});

/** The rules the gate must implement, written out independently of the filter builder. */
function visibleTo(
  object: KnowledgeObject,
  principal: Principal,
  now: string,
  modelLocation: "local" | "cloud",
): boolean {
  const scopeOk =
    object.scope === "shared" ||
    (object.scope === "user" && object.owner.userId === principal.userId) ||
    (object.scope === "household" &&
      principal.householdId !== undefined &&
      object.owner.householdId === principal.householdId);
  // A cloud model never reads a private item (the operator did not allow it in these requests).
  const privacyOk =
    object.privacy === "public" ||
    object.privacy === "household" ||
    (object.privacy === "private" && object.owner.userId === principal.userId && modelLocation === "local");
  const consentOk =
    object.consent.retrieval &&
    (object.consent.agents.includes("*") || object.consent.agents.includes(principal.agentId));
  const validOk =
    object.validity.validFrom <= now &&
    (object.validity.invalidAt === null || object.validity.invalidAt > now);
  return (
    scopeOk && privacyOk && consentOk && validOk && object.status === "active" && object.confidence >= 0.2
  );
}

describe("the policy gate on real OpenSearch", () => {
  let app: FastifyInstance;
  const now = new Date("2026-11-22T12:00:00.000Z");
  const users = ["u1", "u2", "u3", "u4"];
  const households = ["h1", "h2"];
  const objects: KnowledgeObject[] = [];

  beforeAll(async () => {
    app = await startCortex({ opensearchUrl });
    const at = (days: number) => new Date(now.getTime() + days * 86_400_000).toISOString();
    const objectArbitrary = fc.record({
      scope: fc.constantFrom("user", "household", "shared" as const),
      userId: fc.constantFrom(...users),
      householdId: fc.constantFrom(...households),
      privacy: fc.constantFrom("public", "household", "private", "secret" as const),
      retrieval: fc.boolean(),
      agents: fc.constantFrom(["*"], ["a1"], ["a2", "a3"]),
      validFromDays: fc.constantFrom(-30, -1, 2),
      invalidAtDays: fc.constantFrom(null, -2, 5),
      status: fc.constantFrom("active", "active", "demoted" as const),
      confidence: fc.constantFrom(0.1, 0.5, 0.9),
    });
    const samples = fc.sample(objectArbitrary, { numRuns: 300, seed: 20261122 });
    samples.forEach((sample, index) => {
      objects.push({
        id: `gate-${index}`,
        statement: `alpha record ${index} about the shared pantry`,
        type: "fact",
        provenance: {
          key: `gate-${index}`,
          source: "reflection",
          sourceTurnIds: [],
          observedAt: at(-40),
          ingestedAt: at(-40),
        },
        scope: sample.scope,
        owner: { userId: sample.userId, householdId: sample.householdId },
        privacy: sample.privacy,
        consent: { retrieval: sample.retrieval, agents: [...sample.agents] },
        dimensions: {},
        confidence: sample.confidence,
        reinforcementCount: 1,
        toolConfirmations: 0,
        sessionIds: [],
        lastReinforcedAt: at(-40),
        lastDecayedAt: null,
        userDirective: false,
        usageCount: 0,
        lastUsedAt: null,
        validity: {
          validFrom: at(sample.validFromDays),
          invalidAt: sample.invalidAtDays === null ? null : at(sample.invalidAtDays),
        },
        links: [],
        promotionState: "none",
        status: sample.status,
        createdAt: at(-40),
        updatedAt: at(-40),
      });
    });
    const { store } = app.cortex;
    await createDocuments(
      store,
      objects.map((object) => ({
        index: store.indices.knowledge,
        id: object.id,
        document: knowledgeDocument(object),
      })),
    );
    app.cortex.clock = () => now;
  });
  afterAll(async () => {
    await dropIndices(app);
    await app.close();
  });

  it("never returns or even scores an item outside the principal's scope, privacy, consent, validity or model location (2,000 cases)", async () => {
    const byId = new Map(objects.map((object) => [object.id, object]));
    let returned = 0;
    let returnedPrivate = 0;
    let leaks = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          userId: fc.constantFrom(...users, "u9"),
          householdId: fc.option(fc.constantFrom(...households, "h9"), { nil: undefined }),
          agentId: fc.constantFrom("a1", "a2", "a9"),
        }),
        fc.constantFrom("standard", "deep" as const),
        fc.constantFrom("local", "cloud" as const),
        async (principal, mode, modelLocation) => {
          const answer = await retrieveFor(app, {
            principal,
            requestText: "alpha pantry record",
            tokenBudget: 2_000,
            mode,
            modelLocation,
            debug: true,
          });
          const seen = [
            ...answer.facts.map((fact) => fact.id),
            ...(answer.trace?.items ?? []).map((item) => item.id),
          ];
          returned += answer.facts.length;
          if (modelLocation === "local")
            returnedPrivate += answer.facts.filter((f) => f.privacy === "private").length;
          const outside = seen.filter((id) => {
            const object = byId.get(id);
            return object === undefined || !visibleTo(object, principal, now.toISOString(), modelLocation);
          });
          leaks += outside.length;
          return outside.length === 0;
        },
      ),
      { numRuns: 2_000, seed: 7 },
    );
    expect(leaks).toBe(0);
    // The gate must also let eligible items through, or the property above would hold vacuously: private ones
    // too, for a local model.
    expect(returned).toBeGreaterThan(2_000);
    expect(returnedPrivate).toBeGreaterThan(0);
  });
});

describe("Cortex when OpenSearch stops mid-test", () => {
  it("answers /ingest 503 with Retry-After and /retrieve 200 degraded and empty once its OpenSearch is gone", {
    timeout: 600_000,
  }, async () => {
    // An OpenSearch of its own, so stopping it leaves the shared test bed alone.
    const own = await startOpenSearch({ timeoutMs: 300_000 });
    const app = await startCortex({ opensearchUrl: own.endpoints.url, retrieveTimeoutMs: 800 });
    try {
      const acknowledged = await ingestEvents(app, [
        { kind: "knowledge", ...ana, statement: "The attic fan is noisy", type: "fact" },
      ]);
      expect(acknowledged.created).toBe(1);
      const before = await retrieveFor(app, {
        principal: anaPrincipal,
        requestText: "attic fan",
        tokenBudget: 200,
      });
      expect(before.facts).toHaveLength(1);

      await own.stop();

      const ingest = await app.inject({
        method: "POST",
        url: "/ingest",
        headers: auth,
        payload: { events: [{ kind: "turn", ...ana, role: "user", turnId: "after-stop", text: "hello" }] },
      });
      expect(ingest.statusCode).toBe(503);
      expect(ingest.headers["retry-after"]).toBe("5");
      const started = Date.now();
      const during = await retrieveFor(app, {
        principal: anaPrincipal,
        requestText: "attic fan",
        tokenBudget: 200,
      });
      expect(Date.now() - started).toBeLessThan(5_000);
      expect(during).toMatchObject({ degraded: true, bundle: { text: "", tokens: 0 }, facts: [] });
      // Without memory a live-state question is still told to check the live system.
      const live = await retrieveFor(app, {
        principal: anaPrincipal,
        requestText: "is the attic fan running right now?",
        tokenBudget: 200,
      });
      expect(live).toMatchObject({ degraded: true, facts: [], liveState: { detected: true } });
      expect(live.bundle.text).toContain(bundleLiveStateNote[1]);
      expect(live.bundle.tokens).toBe(countTokens(live.bundle.text));
      expect((await app.inject({ method: "GET", url: "/readyz" })).statusCode).toBe(503);
    } finally {
      await app.close();
      await own.stop();
    }
  });
});
