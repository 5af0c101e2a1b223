/**
 * Adversarial: who may call what. Every route against every caller's credential, unknown and missing credentials,
 * a foreign household named in a request, the app erasing someone else, and credential rotation through the
 * credentials folder, on a real Cortex over the real OpenSearch.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callerNames, type RouteContract, routes } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type FullCortex, startCortex, startFullCortex, testCredentials } from "../helpers.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
const household = "home";
const alice = { userId: "alice", householdId: household, agentId: "main" };

/** A concrete path for a route: parameters filled with well-formed values. */
function pathOf(route: RouteContract): string {
  return route.url
    .replace(":hash", "a".repeat(64))
    .replace(":cycleId", "dream-000000")
    .replace(":id", "proposal-000000");
}

const guarded = Object.entries(routes as Record<string, RouteContract>).filter(([, route]) => !route.open);
const grid = guarded.flatMap(([name, route]) =>
  callerNames.map((caller) => ({ name, route, caller, allowed: route.callers?.includes(caller) === true })),
);

describe("adversarial: credentials and routes", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;

  beforeAll(async () => {
    cortex = await startFullCortex({ opensearchUrl, householdId: household });
    app = cortex.app;
  });
  afterAll(async () => cortex?.stop());

  // A body no route accepts: a caller let through gets 400 from validation, never a side effect.
  const invalidBody = { "not-a-field": true };

  it.each(grid)(
    "$route.method $route.url with the $caller credential: allowed=$allowed",
    async ({ route, caller, allowed }) => {
      const response = await app.inject({
        method: route.method,
        url: pathOf(route),
        headers: bearer(caller),
        ...(route.method === "GET" ? {} : { payload: invalidBody }),
      });
      if (allowed) {
        expect([401, 403], response.body).not.toContain(response.statusCode);
      } else {
        expect(response.statusCode, response.body).toBe(403);
        expect(response.json<{ message: string }>().message).toContain(
          `the ${caller} credential may not call`,
        );
      }
    },
  );

  it.each(guarded.map(([name, route]) => ({ name, route })))(
    "$route.method $route.url without a credential, with an unknown one and with a near miss: 401",
    async ({ route }) => {
      for (const headers of [
        {},
        { authorization: "Bearer not-a-known-credential-at-all" },
        { authorization: `Bearer ${testCredentials.gateway}x` },
        { authorization: `Basic ${testCredentials.admin}` },
      ]) {
        const response = await app.inject({
          method: route.method,
          url: pathOf(route),
          headers,
          ...(route.method === "GET" ? {} : { payload: invalidBody }),
        });
        expect(response.statusCode, JSON.stringify(headers)).toBe(401);
      }
    },
  );

  it("refuses a retrieval that names another household, and answers one for its own", async () => {
    const foreign = await app.inject({
      method: "POST",
      url: "/retrieve",
      headers: bearer("gateway"),
      payload: {
        principal: { ...alice, householdId: "neighbours" },
        requestText: "what is the wifi password",
        tokenBudget: 400,
      },
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json<{ message: string }>().message).toContain("not this appliance's household");
    const own = await app.inject({
      method: "POST",
      url: "/retrieve",
      headers: bearer("gateway"),
      payload: { principal: alice, requestText: "what is the wifi password", tokenBudget: 400 },
    });
    expect(own.statusCode).toBe(200);
  });

  it("refuses an ingest that writes into another household, and stores nothing of the batch", async () => {
    const statement = "The neighbours' alarm code is kept in the blue drawer";
    const response = await app.inject({
      method: "POST",
      url: "/ingest",
      headers: bearer("gateway"),
      payload: {
        events: [
          {
            kind: "knowledge",
            scope: "user",
            owner: { userId: "alice" },
            statement: "Alice likes figs",
            type: "fact",
          },
          {
            kind: "knowledge",
            scope: "household",
            owner: { householdId: "neighbours" },
            statement,
            type: "fact",
          },
        ],
      },
    });
    expect(response.statusCode).toBe(403);
    const { body } = await app.cortex.store.client.search({
      index: app.cortex.store.indices.knowledge,
      body: { query: { match_phrase: { statement: "figs" } } },
    });
    expect(body.hits.hits).toHaveLength(0);
  });

  it("refuses an archive recall and search whose principal names another household", async () => {
    const recall = await app.inject({
      method: "GET",
      url: `/archive/${"b".repeat(64)}?userId=alice&agentId=main&householdId=neighbours`,
      headers: bearer("gateway"),
    });
    expect(recall.statusCode).toBe(403);
    const search = await app.inject({
      method: "POST",
      url: "/archive/search",
      headers: bearer("app"),
      payload: { principal: { ...alice, householdId: "neighbours" }, query: "alarm" },
    });
    expect(search.statusCode).toBe(403);
  });

  it("lets the app erase only the requesting person's own data", async () => {
    const other = await app.inject({
      method: "POST",
      url: "/admin/erasure",
      headers: bearer("app"),
      payload: { userId: "bob", requestedBy: "alice", reason: "alice wants bob gone" },
    });
    expect(other.statusCode).toBe(403);
    const own = await app.inject({
      method: "POST",
      url: "/admin/erasure",
      headers: bearer("app"),
      payload: { userId: "carol", requestedBy: "carol", reason: "carol leaves the household" },
    });
    expect(own.statusCode, own.body).toBe(200);
  });
});

describe("adversarial: credential rotation through the credentials folder", () => {
  let app: FastifyInstance;
  let folder: string;
  const first = "gateway-credential-first-0123456789";
  const second = "gateway-credential-second-0123456789";
  const retrieve = (token: string) =>
    app.inject({
      method: "POST",
      url: "/retrieve",
      headers: { authorization: `Bearer ${token}` },
      payload: { principal: { userId: "alice", agentId: "main" }, requestText: "hello", tokenBudget: 400 },
    });

  beforeAll(async () => {
    folder = await mkdtemp(join(tmpdir(), "remram-credentials-"));
    await writeFile(join(folder, "gateway"), `${first}\n`);
    await writeFile(join(folder, "operator"), testCredentials.operator);
    app = await startCortex({
      opensearchUrl,
      credentials: { gateway: first, operator: testCredentials.operator },
      credentialsDir: folder,
      credentialOverlapSeconds: 600,
    });
  });
  afterAll(async () => {
    await app?.close();
    await rm(folder, { recursive: true, force: true });
  });

  it("accepts old and new credentials during the overlap, then refuses the old once the caller uses the new", async () => {
    expect((await retrieve(first)).statusCode).toBe(200);
    expect((await retrieve(second)).statusCode).toBe(401);
    await writeFile(join(folder, "gateway"), `${second}\n`);
    // The folder is re-read every 5 s (a kubelet sync is slower still); the gateway has not reloaded yet.
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect((await retrieve(first)).statusCode).toBe(200);
    expect((await retrieve(second)).statusCode).toBe(200);
    expect((await retrieve(first)).statusCode).toBe(401);
  });

  it("refuses a caller whose credential file was removed, without a restart", async () => {
    await rm(join(folder, "gateway"));
    await expect
      .poll(async () => (await retrieve(second)).statusCode, { timeout: 15_000, interval: 500 })
      .toBe(401);
    const dimensions = await app.inject({ method: "GET", url: "/dimensions", headers: bearer("operator") });
    expect(dimensions.statusCode).toBe(200);
  });

  it("refuses a rotation that gives two callers one value, keeping the credentials in force", async () => {
    await writeFile(join(folder, "gateway"), testCredentials.operator);
    await new Promise((resolve) => setTimeout(resolve, 6_000));
    expect((await retrieve(testCredentials.operator)).statusCode).toBe(403);
    const dimensions = await app.inject({ method: "GET", url: "/dimensions", headers: bearer("operator") });
    expect(dimensions.statusCode).toBe(200);
  });
});
