// Over 400 lines on purpose: reflect → dream → promote → archive as one story on one app and one OpenSearch index
// set, each step building on the state the previous one left; split, every part would replay the earlier steps.
import { randomBytes } from "node:crypto";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { KnowledgeObject } from "@remram/contract";
import type { FastifyInstance } from "fastify";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildApp } from "../app.js";
import { cortexConfig } from "../config.js";
import { maturationIndices } from "../knowledge/records.js";
import { maturationPlugin } from "../maturation.js";
import { bearer, headersFor, testCredentials } from "../testing/callers.js";

const alice = { userId: "alice", householdId: "h1", agentId: "main" };
const aliceScope = { kind: "user", ownerIds: ["alice"] };
const household = { kind: "household", ownerIds: ["h1"] };
const day = (n: number) => new Date(Date.UTC(2026, 2, 1 + n, 9)).toISOString();

describe("reflection, dream, promotion and archive on a real OpenSearch and a real git repository", () => {
  let app: FastifyInstance;
  let workspace: string;
  let archiveDir: string;
  let now = day(0);

  const post = async (url: string, payload: Record<string, unknown>) =>
    app.inject({ method: "POST", url, headers: headersFor("POST", url), payload });
  const reflect = async (sessionId: string, delta: Record<string, unknown>) => {
    const response = await post("/reflect", { principal: alice, sessionId, ...delta });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ created: string[]; reinforced: string[]; invalidated: string[] }>();
  };
  const objects = async (): Promise<KnowledgeObject[]> => {
    const { body } = await app.cortex.store.client.search({
      index: app.cortex.store.indices.knowledge,
      body: {
        size: 100,
        query: { match_all: {} },
        _source: { excludes: ["embedding"] },
        sort: [{ id: "asc" }],
      },
    });
    return body.hits.hits.map((hit) => hit._source as KnowledgeObject);
  };
  const byStatement = (all: KnowledgeObject[], fragment: string) => {
    const found = all.filter((o) => o.statement.includes(fragment));
    expect(found, fragment).toHaveLength(1);
    return found[0] as KnowledgeObject;
  };
  const item = (
    type: string,
    statement: string,
    claim: [string, string, string] | undefined,
    scope = aliceScope,
  ) => ({
    type,
    statement,
    ...(claim && { claim: { subject: claim[0], predicate: claim[1], object: claim[2] } }),
    scope,
    sourceTurnIds: [`turn-${randomBytes(3).toString("hex")}`],
  });

  beforeAll(async () => {
    const testbed = inject("testbed");
    if (!testbed.opensearch)
      throw new Error("this suite needs the opensearch test-bed service (REMRAM_TESTBED)");
    workspace = await mkdtemp(join(tmpdir(), "remram-workspace-"));
    archiveDir = await mkdtemp(join(tmpdir(), "remram-archive-"));
    const config = cortexConfig.parse({
      credentials: testCredentials,
      opensearchUrl: testbed.opensearch.url,
      ...(testbed.ollama && { ollamaUrl: testbed.ollama.url, embedModel: testbed.ollama.embedModel }),
      indexPrefix: `it-mat-${randomBytes(4).toString("hex")}`,
      logLevel: "silent",
      usageFlushIntervalMs: 3_600_000,
    });
    app = await buildApp({
      config,
      logger: false,
      clock: () => new Date(now),
      plugins: [
        maturationPlugin({
          workspaceDir: workspace,
          archiveDir,
          gitAuthor: { name: "Remram Cortex", email: "cortex@remram.invalid" },
        }),
      ],
    });
    await app.cortex.initialized;
  });

  afterAll(async () => {
    if (app) {
      const { client, indices } = app.cortex.store;
      const own = maturationIndices(app.cortex.store);
      for (const alias of Object.values(indices)) {
        await client.transport.request({ method: "DELETE", path: `/${alias}-v*` }, { ignore: [404] });
        await client.transport.request(
          { method: "DELETE", path: `/_index_template/${alias}` },
          { ignore: [404] },
        );
      }
      for (const index of Object.values(own)) {
        await client.transport.request({ method: "DELETE", path: `/${index}` }, { ignore: [404] });
      }
      await app.close();
    }
    await rm(workspace, { recursive: true, force: true });
    await rm(archiveDir, { recursive: true, force: true });
  });

  it("ends a multi-session story with the right objects valid, invalidated, decayed and consolidated", async () => {
    now = day(0);
    await reflect("s1", {
      items: [
        item("preference", "Alice takes tea in the morning", ["alice", "morning drink", "tea"]),
        item("decision", "The garden app stores its data in Postgres", [
          "garden app",
          "database",
          "postgres",
        ]),
        item(
          "constraint",
          "Never deploy the household services on Fridays",
          ["deploys", "forbidden day", "friday"],
          household,
        ),
        item("fact", "Alice saw a heron at the pond", undefined),
      ],
    });
    now = day(1);
    const second = await reflect("s2", {
      items: [
        item(
          "constraint",
          "No deploys of household services on a Friday",
          ["Deploys", "forbidden day", "Friday"],
          household,
        ),
        item("preference", "Alice drinks tea in the morning", ["alice", "morning drink", "tea"]),
      ],
    });
    expect(second.created).toEqual([]);
    expect(second.reinforced).toHaveLength(2);
    now = day(2);
    await reflect("s3", {
      items: [
        item(
          "constraint",
          "Friday is no deploy day for household services",
          ["deploys", "forbidden day", "friday"],
          household,
        ),
        item("decision", "The garden app moved to SQLite", ["garden app", "database", "sqlite"]),
        item("preference", "Alice switched to coffee in the morning", ["alice", "morning drink", "coffee"]),
      ],
    });

    now = day(3);
    const dream = await post("/dream", {});
    expect(dream.statusCode, dream.body).toBe(200);
    const report = dream.json<{
      cycleId: string;
      runId: string;
      counts: Record<string, number>;
      proposalIds: string[];
    }>();
    expect(report.runId).toBe(report.cycleId);
    expect(report.counts).toMatchObject({
      contradictionsDetected: 2,
      contradictionsResolved: 2,
      invalidated: 2,
      principlesCreated: 1,
    });

    let all = await objects();
    const sqlite = byStatement(all, "SQLite");
    expect(byStatement(all, "Postgres")).toMatchObject({
      status: "invalidated",
      links: expect.arrayContaining([{ rel: "supersededBy", targetId: sqlite.id }]),
    });
    expect(byStatement(all, "SQLite").status).toBe("active");
    expect(byStatement(all, "takes tea").status).toBe("invalidated");
    expect(byStatement(all, "coffee").status).toBe("active");
    const constraint = byStatement(
      all.filter((o) => o.type === "constraint"),
      "Never deploy",
    );
    expect(constraint).toMatchObject({
      reinforcementCount: 3,
      sessionIds: ["s1", "s2", "s3"],
      status: "active",
    });
    const principle = all.find((o) => o.type === "principle");
    expect(principle).toMatchObject({
      statement: constraint.statement,
      scope: "household",
      provenance: { source: "dream" },
    });
    expect(principle?.links).toEqual([{ rel: "evidence", targetId: constraint.id }]);

    const stored = await app.inject({
      method: "GET",
      url: `/dream/${report.cycleId}`,
      headers: headersFor("GET", `/dream/${report.cycleId}`),
    });
    expect(stored.json()).toMatchObject({ cycleId: report.cycleId, counts: report.counts });

    // Weeks later the recurring knowledge is reaffirmed; the one-off remark is not.
    now = day(50);
    await reflect("s4", {
      items: [
        item("decision", "The garden app stores its data in SQLite", ["garden app", "database", "sqlite"]),
        item("preference", "Coffee in the morning for Alice", ["alice", "morning drink", "coffee"]),
        item(
          "constraint",
          "Never deploy household services on Fridays",
          ["deploys", "forbidden day", "friday"],
          household,
        ),
      ],
    });
    now = day(56);
    const later = await post("/dream", {});
    expect(later.statusCode, later.body).toBe(200);
    expect(later.json<{ counts: Record<string, number> }>().counts.demoted).toBeGreaterThanOrEqual(1);
    all = await objects();
    expect(byStatement(all, "heron")).toMatchObject({ status: "demoted", validity: { invalidAt: null } });
    expect(byStatement(all, "SQLite").status).toBe("active");
    expect(byStatement(all, "coffee").status).toBe("active");
  });

  it("lists a proposal whose diff reads well, promotes it into git once, and answers the same commit again", async () => {
    const listed = await app.inject({
      method: "GET",
      url: "/proposals?status=pending",
      headers: headersFor("GET", "/proposals?status=pending"),
    });
    const { proposals } = listed.json<{
      proposals: { id: string; artifactPath: string; diff: string; proposedDigest: string }[];
    }>();
    const principles = proposals.find((p) => p.artifactPath === "artifacts/households/h1/principles.md");
    expect(principles, JSON.stringify(proposals.map((p) => p.artifactPath))).toBeDefined();
    const proposal = principles as NonNullable<typeof principles>;
    expect(proposal.diff).toContain("--- /dev/null");
    expect(proposal.diff).toContain("+++ b/artifacts/households/h1/principles.md");
    expect(proposal.diff).toMatch(
      /\+- Never deploy the household services on Fridays _\(confidence 0\.\d\d, since 2026-03-04\)_/,
    );

    const promote = { proposalId: proposal.id, approvedBy: "alice", expectedDigest: proposal.proposedDigest };
    const first = await post("/promote", promote);
    expect(first.statusCode, first.body).toBe(200);
    const { commitId } = first.json<{ commitId: string }>();
    const again = await post("/promote", promote);
    expect(again.json()).toEqual({ commitId, alreadyPromoted: true });

    const git = simpleGit(workspace);
    expect((await git.raw(["log", "-1", "--format=%H %an"])).trim()).toBe(`${commitId} Remram Cortex`);
    expect(await git.raw(["log", "-1", "--format=%B"])).toContain(
      `Proposal ${proposal.id} approved by alice.`,
    );
    expect(await readFile(join(workspace, proposal.artifactPath), "utf8")).toContain(
      "# Principles (household h1)",
    );
    const principle = (await objects()).find((o) => o.type === "principle");
    expect(principle?.promotionState).toBe("promoted");
    const chunks = await app.cortex.store.client.search({
      index: app.cortex.store.indices.chunks,
      body: { query: { term: { path: proposal.artifactPath } } },
    });
    expect(chunks.body.hits.hits).toHaveLength(1);
  });

  it("refuses a stale base with 409, records a denial with who and why, and never proposes it again", async () => {
    const kept = {
      ...item("fact", "The spare key is under the blue pot", undefined, household),
      userDirective: true,
    };
    await reflect("s6", { items: [kept] });
    expect((await post("/dream", {})).statusCode).toBe(200);
    const pending = async () =>
      (
        await app.inject({
          method: "GET",
          url: "/proposals?status=pending",
          headers: headersFor("GET", "/proposals?status=pending"),
        })
      )
        .json<{ proposals: { id: string; artifactPath: string }[] }>()
        .proposals.filter((p) => p.artifactPath === "artifacts/households/h1/facts.md");
    const [proposal] = await pending();
    if (!proposal) throw new Error("expected a proposal for the household facts");
    const stale = await post("/promote", {
      proposalId: proposal.id,
      approvedBy: "bob",
      baseDigest: `sha256:${"0".repeat(64)}`,
    });
    expect(stale.statusCode, stale.body).toBe(409);
    const denied = await post(`/proposals/${proposal.id}/deny`, { deniedBy: "bob", reason: "not now" });
    expect(denied.json()).toMatchObject({ state: "denied", decision: { by: "bob", reason: "not now" } });
    const afterDenial = await post("/promote", { proposalId: proposal.id, approvedBy: "bob" });
    expect(afterDenial.statusCode).toBe(409);
    expect((await post("/dream", {})).statusCode).toBe(200);
    expect(await pending()).toEqual([]);
    const missing = await post("/promote", { proposalId: "prop-nope", approvedBy: "bob" });
    expect(missing.statusCode).toBe(404);
  });

  it("runs exactly one of two concurrent dream cycles and names the running one in the 409", async () => {
    const [a, b] = await Promise.all([post("/dream", { full: true }), post("/dream", { full: true })]);
    const codes = [a.statusCode, b.statusCode].sort();
    expect(codes).toEqual([200, 409]);
    const ran = (a.statusCode === 200 ? a : b).json<{ cycleId: string }>();
    const refused = (a.statusCode === 409 ? a : b).json<{ cycleId: string }>();
    expect(refused.cycleId).toBe(ran.cycleId);
    const status = await app.inject({
      method: "GET",
      url: "/dream/status",
      headers: headersFor("GET", "/dream/status"),
    });
    expect(status.json()).toEqual({ running: false });
    const metrics = await app.cortex.metrics.registry.metrics();
    expect(metrics).toMatch(/cortex_dream_cycle_duration_seconds_count\{outcome="succeeded"\} 5\n/);
  });

  it("rejects bad input with 400 naming the field, and writes outside the scope with 403", async () => {
    const principle = await post("/reflect", {
      principal: alice,
      sessionId: "s9",
      items: [item("principle", "Only dream may say this", undefined)],
    });
    expect(principle.statusCode).toBe(400);
    expect(principle.json<{ message: string }>().message).toContain("items.0.type");
    const foreign = await post("/reflect", {
      principal: alice,
      sessionId: "s9",
      items: [item("fact", "Bob's bank PIN", undefined, { kind: "user", ownerIds: ["bob"] })],
    });
    expect(foreign.statusCode).toBe(403);
    expect(foreign.json()).toMatchObject({ violations: [{ path: "items.0.scope" }] });
    const dream = await post("/dream", { maxProposals: 1000 });
    expect(dream.statusCode).toBe(400);
    expect(dream.json<{ message: string }>().message).toContain("maxProposals");
  });

  it("invalidates on a user correction and never deletes", async () => {
    now = day(57);
    const corrected = await reflect("s5", {
      corrections: [
        {
          claim: { subject: "alice", predicate: "morning drink" },
          statement: "That's wrong, I don't drink coffee any more",
          scope: aliceScope,
          sourceTurnIds: ["t-fix"],
        },
      ],
    });
    expect(corrected.invalidated).toHaveLength(1);
    const coffee = byStatement(await objects(), "coffee");
    expect(coffee).toMatchObject({ status: "invalidated", validity: { invalidAt: day(57) } });
  });

  it("archives a transcript once under its hash, recalls it only with consent, and reports tampering", async () => {
    const document = {
      createdAt: day(10),
      source: { sessionId: "s1", channel: "telegram" },
      messages: [{ role: "user", content: "Let's plan the vegetable beds for spring", turnId: "t1" }],
      consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
    };
    const first = await post("/archive", {
      document,
      summary: "Planning the spring vegetable beds",
      clusterId: "garden",
    });
    expect(first.statusCode, first.body).toBe(200);
    const { hash, stored, coordinates } = first.json<{
      hash: string;
      stored: boolean;
      coordinates: unknown;
    }>();
    expect(stored).toBe(true);
    expect(coordinates).toEqual({ x: -47, y: 8, z: 0 });
    const again = await post("/archive", { document, summary: "another summary" });
    expect(again.json()).toMatchObject({ hash, stored: false });

    const search = await post("/archive/search", {
      principal: alice,
      query: "vegetable",
      x: { min: -60, max: 0 },
    });
    const results = search.json<{ results: Record<string, unknown>[] }>().results;
    expect(results).toHaveLength(1);
    expect(results[0]).toMatchObject({
      hash,
      summary: "Planning the spring vegetable beds",
      clusterId: "garden",
    });
    expect(results[0]).not.toHaveProperty("messages");
    const bobSearch = await post("/archive/search", {
      principal: { userId: "bob", agentId: "main" },
      query: "vegetable",
    });
    expect(bobSearch.json<{ results: unknown[] }>().results).toEqual([]);

    const own = await app.inject({
      method: "GET",
      url: `/archive/${hash}?userId=alice&agentId=main`,
      headers: bearer("gateway"),
    });
    expect(own.statusCode).toBe(200);
    expect(
      own.json<{ document: { messages: { content: string }[] } }>().document.messages[0]?.content,
    ).toContain("vegetable");
    const bob = await app.inject({
      method: "GET",
      url: `/archive/${hash}?userId=bob&agentId=main`,
      headers: headersFor("GET", `/archive/${hash}?userId=bob&agentId=main`),
    });
    expect(bob.statusCode).toBe(403);
    expect(bob.json<{ message: string }>().message).toContain("owners");

    const file = join(archiveDir, "hot", hash.slice(0, 2), `${hash}.json`);
    await writeFile(file, (await readFile(file, "utf8")).replace("vegetable", "flower"));
    const tampered = await app.inject({
      method: "GET",
      url: `/archive/${hash}?userId=alice&agentId=main`,
      headers: bearer("gateway"),
    });
    expect(tampered.statusCode).toBe(500);
    const verify = await app.inject({
      method: "GET",
      url: "/archive/verify",
      headers: headersFor("GET", "/archive/verify"),
    });
    expect(verify.json()).toMatchObject({ checked: 1, corrupt: [{ hash }] });
  });

  it("revives a demoted principle when its pattern recurs, keeping its history and evidence", async () => {
    // The household's bedtime rule, asserted on consecutive days from `first`, one session a day.
    const assertBedtime = async (first: number, sessions: string[]) => {
      for (const [offset, session] of sessions.entries()) {
        now = day(first + offset);
        await reflect(session, {
          items: [
            item("constraint", "The children go to bed at eight", ["children", "bedtime", "8pm"], household),
          ],
        });
      }
    };
    await assertBedtime(100, ["b1", "b2", "b3"]);
    now = day(103);
    expect(
      (await post("/dream", {})).json<{ counts: Record<string, number> }>().counts.principlesCreated,
    ).toBe(1);
    const founded = (await objects()).find(
      (o) => o.type === "principle" && o.statement === "The children go to bed at eight",
    ) as KnowledgeObject;
    expect(founded.status).toBe("active");

    // Half a year of silence demotes the pattern and its principle.
    now = day(300);
    await post("/dream", {});
    const silent = (await objects()).find((o) => o.id === founded.id);
    expect(silent?.status).toBe("demoted");

    // Asserted again in new sessions, the evidence revives and re-qualifies: the same principle comes back.
    await assertBedtime(301, ["b4", "b5", "b6", "b7"]);
    now = day(305);
    await post("/dream", {});
    const revived = (await objects()).find((o) => o.id === founded.id);
    expect(revived).toMatchObject({
      status: "active",
      createdAt: founded.createdAt,
      reinforcementCount: founded.reinforcementCount + 1,
      links: expect.arrayContaining(founded.links),
    });
    expect(
      (await objects()).filter((o) => o.type === "principle" && o.statement === founded.statement),
    ).toHaveLength(1);
  });

  it("erases a user's data on request and audits it", async () => {
    const erased = await post("/admin/erasure", {
      userId: "alice",
      requestedBy: "admin",
      reason: "user request",
    });
    expect(erased.statusCode, erased.body).toBe(200);
    const outcome = erased.json<{ auditId: string; knowledgeDeleted: number; archiveErased: number }>();
    expect(outcome.knowledgeDeleted).toBeGreaterThan(0);
    expect(outcome.archiveErased).toBe(1);
    const left = await objects();
    expect(left.filter((o) => o.owner.userId === "alice")).toEqual([]);
    expect(left.some((o) => o.scope === "household")).toBe(true);
    // Their vectors and neighbour lists went with them.
    const { store } = app.cortex;
    const vectors = await store.client.count({
      index: store.indices.vectors,
      body: { query: { term: { "owner.userId": "alice" } } },
    });
    expect(vectors.body.count).toBe(0);
    const lists = await store.client.search({
      index: maturationIndices(store).neighbours,
      body: { size: 1000, _source: false },
    });
    const remaining = new Set(left.map((o) => o.id));
    expect(lists.body.hits.hits.filter((hit) => !remaining.has(hit._id ?? ""))).toEqual([]);
    const audit = await app.cortex.store.client.get({
      index: maturationIndices(app.cortex.store).records,
      id: `audit:${outcome.auditId}`,
    });
    expect(audit.body._source).toMatchObject({
      body: { userId: "alice", requestedBy: "admin", reason: "user request" },
    });
  });
});
