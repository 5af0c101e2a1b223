/**
 * Adversarial: live values on every write path (security issue 15, finding 5). Each case writes credentials, card
 * numbers or contact details through ingest, reflect, archive or a promotion on a real Cortex over the real
 * OpenSearch and git, then searches what was kept — every OpenSearch index of the Cortex, the archive's files, the
 * git history and the workspace — for the live value. It must be absent, except a contact detail its owner asked
 * to keep, which must stay private to them and out of runs routed to a cloud model.
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Writable } from "node:stream";
import type { RetrieveRequestInput, RetrieveResponse } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { buildApp } from "../../src/app.js";
import { cortexConfig } from "../../src/config.js";
import { createRecord, maturationIndices } from "../../src/knowledge/records.js";
import { writeObjects } from "../../src/knowledge/repository.js";
import { maturationPlugin } from "../../src/maturation.js";
import { storedObject } from "../../src/testing/fixtures.js";
import {
  dropIndices,
  type FullCortex,
  headersFor,
  ingestEvents,
  startFullCortex,
  testCredentials,
} from "../helpers.js";
import { expectAbsent, filesText, live, pendingProposal } from "./live-values.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
const alice = { userId: "alice", householdId: "home", agentId: "main" };
const bob = { userId: "bob", householdId: "home", agentId: "main" };
const own = { scope: "user", owner: { userId: "alice" } };
const household = { scope: "household", owner: { householdId: "home" } };

describe("adversarial: live values on every write path", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;

  const post = (url: string, payload: unknown) =>
    app.inject({ method: "POST", url, headers: headersFor("POST", url), payload: payload as object });
  const get = (url: string) => app.inject({ method: "GET", url, headers: headersFor("GET", url) });

  /** Every document of every OpenSearch index this Cortex owns (or of one), as one text. */
  const storedText = async (index?: string): Promise<string> => {
    const prefix = app.cortex.store.indices.knowledge.replace(/-knowledge$/, "");
    const target = index ?? `${prefix}-*`;
    const { client } = app.cortex.store;
    await client.transport.request({ method: "POST", path: `/${target}/_refresh` });
    const { body } = await client.transport.request({
      method: "POST",
      path: `/${target}/_search`,
      body: { size: 10_000, query: { match_all: {} } },
    });
    return JSON.stringify((body as { hits: { hits: unknown[] } }).hits.hits);
  };
  const gitText = async (): Promise<string> => {
    const git = simpleGit(cortex.workspace);
    const history = await git.raw(["log", "--all", "-p", "--format=%H%n%B"]).catch(() => "");
    return `${history}\n${await filesText(cortex.workspace, (path) => path.includes("/.git/"))}`;
  };
  const retrieve = async (request: RetrieveRequestInput): Promise<RetrieveResponse> => {
    const response = await post("/retrieve", request);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<RetrieveResponse>();
  };
  const turnIds = ["t1"];

  beforeAll(async () => {
    cortex = await startFullCortex({ opensearchUrl });
    app = cortex.app;
  });
  afterAll(async () => cortex?.stop());

  it("ingest: a statement and claim with a password, a GitHub token and an API key keep none of them", async () => {
    const answer = await ingestEvents(app, [
      {
        kind: "knowledge",
        ...own,
        type: "fact",
        statement: `Alice's NAS login password is ${live.password} and CI uses ${live.githubToken}`,
        claim: { subject: "alice", predicate: "nas api key", object: `api_key=${live.apiKey}` },
      },
    ]);
    expect(answer.items[0]?.redactions).toBe(3);
    expectAbsent(await storedText(), [live.password, live.githubToken, live.apiKey]);
  });

  it("ingest: card numbers spaced, dashed and contiguous in a turn are replaced, Luhn-valid ones only", async () => {
    await ingestEvents(app, [
      {
        kind: "turn",
        ...own,
        role: "user",
        turnId: "t-card",
        text: `pay with ${live.visa}, or ${live.mastercard}, or amex ${live.amex}; order 4111 1111 1111 1112 is not a card`,
      },
    ]);
    const stored = await storedText();
    expectAbsent(stored, [live.visa, live.mastercard, live.amex]);
    expect(stored).toContain("4111 1111 1111 1112");
  });

  it("ingest: cookies and session ids in a tool result are replaced", async () => {
    await ingestEvents(app, [
      {
        kind: "tool_result",
        ...own,
        tool: "curl",
        output: `HTTP/1.1 200 OK\nSet-Cookie: auth=${live.cookie}; Path=/; HttpOnly\nLocation: /home?PHPSESSID=${live.session}\n\nCookie: remember_me=${live.cookie}`,
      },
    ]);
    expectAbsent(await storedText(), [live.cookie, live.session]);
  });

  it("ingest: a document with webhook URLs, a private key and URL credentials in text, title and summary", async () => {
    await ingestEvents(app, [
      {
        kind: "document",
        ...household,
        sourceKind: "artifact",
        sourceId: "runbook",
        title: `Runbook (alerts go to ${live.slackHook})`,
        summary: `Deploy notes; chat hook ${live.discordHook}`,
        text: `Alerts: ${live.slackHook}\n\n-----BEGIN RSA PRIVATE KEY-----\n${live.keyLine}\n-----END RSA PRIVATE KEY-----\n\nDB: postgres://admin:${live.dbPassword}@db.internal:5432/app`,
      },
    ]);
    expectAbsent(await storedText(), [live.slackHook, live.discordHook, live.keyLine, live.dbPassword]);
  });

  it("ingest: contact details in a household item are replaced, the rest of the statement kept", async () => {
    await ingestEvents(app, [
      {
        kind: "knowledge",
        ...household,
        type: "fact",
        statement: `The plumber Kowalski answers at ${live.email} and ${live.phone}`,
      },
    ]);
    const stored = await storedText();
    expectAbsent(stored, [live.email, live.phone]);
    expect(stored).toContain("The plumber Kowalski answers at <EMAIL> and <PHONE>");
  });

  it("ingest: a contact its owner keeps is private, marked, and reaches only her runs on a local model", async () => {
    const statement = `Alice's dentist Dr Meyer is reachable at ${live.email} or ${live.phone}`;
    const [item] = (await ingestEvents(app, [{ kind: "knowledge", ...own, type: "fact", statement }])).items;
    const { body } = await app.cortex.store.client.get({
      index: app.cortex.store.indices.knowledge,
      id: item?.ids[0] ?? "",
    });
    expect(body._source).toMatchObject({ statement, privacy: "private", sensitivity: ["contact"] });
    const ask = { requestText: "dentist Meyer reachable", tokenBudget: 500 };
    const seen = async (request: RetrieveRequestInput) =>
      (await retrieve(request)).facts.some((fact) => fact.statement === statement);
    expect(await seen({ principal: alice, ...ask })).toBe(false);
    expect(await seen({ principal: alice, ...ask, modelLocation: "cloud" })).toBe(false);
    expect(await seen({ principal: alice, ...ask, modelLocation: "local" })).toBe(true);
    expect(await seen({ principal: bob, ...ask, modelLocation: "local" })).toBe(false);
  });

  it("reflect: credentials and cards in items, claims, corrections and candidate dimensions are replaced", async () => {
    const response = await post("/reflect", {
      principal: alice,
      sessionId: "s-reflect-1",
      items: [
        {
          type: "fact",
          statement: `The garage door PIN is 4711 and the router password is ${live.password}`,
          claim: { subject: "alice", predicate: "card on file", object: live.visa },
          scope: { kind: "household", ownerIds: ["home"] },
          sourceTurnIds: turnIds,
        },
      ],
      corrections: [
        {
          statement: `the old token ${live.githubToken} is gone`,
          scope: { kind: "user", ownerIds: ["alice"] },
          sourceTurnIds: turnIds,
          replacement: {
            type: "fact",
            statement: `Alice's shop session is PHPSESSID=${live.session}`,
            scope: { kind: "user", ownerIds: ["alice"] },
            sourceTurnIds: turnIds,
          },
        },
      ],
      candidateDimensions: [{ name: "wifi", value: `password: ${live.dbPassword}`, sourceTurnIds: turnIds }],
    });
    expect(response.statusCode, response.body).toBe(200);
    expectAbsent(await storedText(), [
      live.password,
      live.visa,
      live.githubToken,
      live.session,
      live.dbPassword,
    ]);
  });

  it("ids: a token as a session, turn, tool or tool-call id is stored as its hash on ingest, reflect and save", async () => {
    const token = live.githubToken;
    await ingestEvents(app, [
      {
        kind: "tool_result",
        ...own,
        sessionId: token,
        turnIds: [token],
        tool: token,
        toolCallId: token,
        output: "The heat pump's filter was cleaned in October.",
      },
      { kind: "turn", ...own, sessionId: token, turnId: token, role: "user", text: "The shed key is blue." },
    ]);
    const reflected = await post("/reflect", {
      principal: alice,
      sessionId: token,
      items: [
        {
          type: "fact",
          statement: "Alice repaints the fence every third spring.",
          scope: { kind: "user", ownerIds: ["alice"] },
          sourceTurnIds: [token],
        },
      ],
    });
    expect(reflected.statusCode, reflected.body).toBe(200);
    const saved = await post("/remember", {
      principal: alice,
      statement: "Alice's bike lock code changes every January.",
      type: "fact",
      scope: "user",
      sessionId: token,
      turnId: token,
    });
    expect(saved.statusCode, saved.body).toBe(200);
    const stored = await storedText();
    expectAbsent(stored, [token]);
    // The hash stands in for the id everywhere, so its copies still match.
    expect(stored).toMatch(/h:[0-9a-f]{40}/);
  });

  it("reflect: a user's own contact detail is kept private and marked; a household's is replaced", async () => {
    const response = await post("/reflect", {
      principal: alice,
      sessionId: "s-reflect-2",
      items: [
        {
          type: "fact",
          statement: `Alice's physiotherapist answers on +44 20 7946 0958`,
          scope: { kind: "user", ownerIds: ["alice"] },
          sourceTurnIds: turnIds,
          privacy: "household",
        },
        {
          type: "fact",
          statement: `The landlord's mail is landlord.office@example.org`,
          scope: { kind: "household", ownerIds: ["home"] },
          sourceTurnIds: turnIds,
        },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const stored = await storedText();
    expectAbsent(stored, ["landlord.office@example.org"]);
    const { body } = await app.cortex.store.client.search({
      index: app.cortex.store.indices.knowledge,
      body: { query: { match_phrase: { statement: "physiotherapist answers" } } },
    });
    expect(body.hits.hits[0]?._source).toMatchObject({ privacy: "private", sensitivity: ["contact"] });
  });

  it("archive: messages, tags and summary keep no credential, card or contact in files, index or recall", async () => {
    const response = await post("/archive", {
      document: {
        createdAt: new Date().toISOString(),
        source: { sessionId: "s-archive", channel: "telegram" },
        messages: [
          { role: "user", content: `my card is ${live.visa} and mail ${live.email}` },
          { role: "tool", content: `Set-Cookie: sid=${live.cookie}; Path=/\nhook ${live.slackHook}` },
        ],
        tags: [live.githubToken],
        consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
      },
      summary: `Alice paid with ${live.mastercard}; password ${live.password}`,
    });
    expect(response.statusCode, response.body).toBe(200);
    const { hash } = response.json<{ hash: string }>();
    const recalled = await get(`/archive/${hash}?userId=alice&agentId=main`);
    const secrets = [live.visa, live.email, live.cookie, live.slackHook, live.githubToken, live.mastercard];
    expectAbsent(recalled.body, secrets);
    expectAbsent(await filesText(cortex.archiveDir), [...secrets, live.password]);
    // The archive's summary index; the knowledge index holds Alice's own, kept contact from an earlier case.
    expectAbsent(await storedText(maturationIndices(app.cortex.store).archive), [...secrets, live.password]);
  });

  it("promotion: a legacy object holding a token and an e-mail is proposed and committed redacted", async () => {
    const now = new Date().toISOString();
    const legacy = storedObject({
      id: "ko_legacy_secret",
      statement: `Backups use AWS key AKIAQWERTYUIOPASDFGH and report to ${live.email}`,
      scope: "user",
      owner: { userId: "alice" },
      privacy: "private",
      confidence: 0.9,
      reinforcementCount: 4,
      userDirective: true,
      provenance: { key: "legacy:1", source: "import", sourceTurnIds: [], observedAt: now, ingestedAt: now },
      lastReinforcedAt: now,
      validity: { validFrom: now, invalidAt: null },
      createdAt: now,
      updatedAt: now,
    });
    await writeObjects(app.cortex.store, [{ object: legacy, embedding: null, embeddingModel: null }], []);
    expect((await post("/dream", { full: true })).statusCode).toBe(200);
    const listed = await get("/proposals?status=pending");
    const proposal = listed
      .json<{ proposals: { id: string; artifactPath: string; proposedDigest: string; diff: string }[] }>()
      .proposals.find((p) => p.artifactPath.startsWith("artifacts/users/alice/"));
    expect(proposal, listed.body).toBeDefined();
    expectAbsent(proposal?.diff ?? "", ["AKIAQWERTYUIOPASDFGH", live.email]);
    const promoted = await post("/promote", {
      proposalId: proposal?.id,
      approvedBy: "alice",
      expectedDigest: proposal?.proposedDigest,
    });
    expect(promoted.statusCode, promoted.body).toBe(200);
    const history = await gitText();
    expect(history).toContain("AWS key <TOKEN> and report to <EMAIL>");
    expectAbsent(history, ["AKIAQWERTYUIOPASDFGH", live.email]);
    const { body } = await app.cortex.store.client.search({
      index: maturationIndices(app.cortex.store).records,
      body: { size: 100, query: { term: { kind: "proposal" } } },
    });
    expectAbsent(JSON.stringify(body.hits.hits), ["AKIAQWERTYUIOPASDFGH", live.email]);
  });

  it("promotion: a proposal drafted before redaction, holding a credential, is refused and never reaches git", async () => {
    const content = `---\ntitle: "Facts"\n---\n\n- the vault token is ${live.githubToken}\n`;
    const proposal = pendingProposal("prop-legacy-leak", content);
    await createRecord(app.cortex.store, maturationIndices(app.cortex.store), proposal);
    const refused = await post("/promote", { proposalId: "prop-legacy-leak", approvedBy: "alice" });
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json<{ message: string }>().message).toContain("credentials");
    expectAbsent(await gitText(), [live.githubToken]);
  });

  it("dimension values and a denial reason: a phone number and a token never reach OpenSearch", async () => {
    // Values of this case alone: an earlier case keeps live.phone in Alice's own statement, as it should.
    const phone = "+44 20 7946 0123";
    const token = "ghp_Dm3nS1oNvAlU3tOk3nZ9yX8wV7uT6sR5qP4o";
    const dimensions = { plumbing: [`call ${phone}`, `key ${token}`] };
    const fact = { type: "fact", statement: "The plumber comes on Mondays", dimensions };
    await ingestEvents(app, [{ kind: "knowledge", ...own, ...fact }]);
    const scope = { kind: "user", ownerIds: ["alice"] };
    const items = [{ ...fact, statement: "The plumber is Kowalski", scope, sourceTurnIds: turnIds }];
    const reflected = await post("/reflect", { principal: alice, sessionId: "s-dimensions", items });
    expect(reflected.statusCode, reflected.body).toBe(200);
    const indices = maturationIndices(app.cortex.store);
    await createRecord(app.cortex.store, indices, pendingProposal("prop-deny", "- x\n"));
    const reason = `duplicate; ask ${phone}, token ${token}`;
    const denied = await post("/proposals/prop-deny/deny", { deniedBy: "alice", reason });
    expect(denied.statusCode, denied.body).toBe(200);
    expect(denied.json<{ decision: { reason: string } }>().decision.reason).toBe(
      "duplicate; ask <PHONE>, token <TOKEN>",
    );
    // Ingest counts candidate dimensions after it answers: wait for the sample, then look for the values.
    await vi.waitFor(async () =>
      expect(await storedText(app.cortex.store.indices.dimensions)).toContain("plumbing"),
    );
    const stored = await storedText();
    expect(stored).toContain("call <PHONE>");
    expectAbsent(stored, [phone, phone.replaceAll(" ", ""), token]);
  });

  it("logs: no contact detail or credential reaches the log at any level, on success or refusal", async () => {
    const lines: string[] = [];
    const stream = new Writable({
      write(chunk, _encoding, done) {
        lines.push(String(chunk));
        done();
      },
    });
    const folder = await mkdtemp(join(tmpdir(), "remram-redaction-log-"));
    const traced = await buildApp({
      config: cortexConfig.parse({
        credentials: testCredentials,
        opensearchUrl,
        indexPrefix: `it-log-${randomBytes(4).toString("hex")}`,
        usageFlushIntervalMs: 3_600_000,
      }),
      logger: { level: "trace", stream },
      plugins: [
        maturationPlugin({
          workspaceDir: join(folder, "repo"),
          archiveDir: join(folder, "archive"),
          gitAuthor: { name: "Remram Cortex", email: "cortex@remram.invalid" },
        }),
      ],
    });
    try {
      await traced.cortex.initialized;
      const send = (url: string, payload: unknown) =>
        traced.inject({ method: "POST", url, headers: headersFor("POST", url), payload: payload as object });
      const statement = `Alice's dentist: ${live.email}, ${live.phone}, card ${live.visa}`;
      const fact = { kind: "knowledge", ...own, type: "fact", statement };
      expect((await send("/ingest", { events: [fact] })).statusCode).toBe(200);
      const reflected = await send("/reflect", {
        principal: alice,
        sessionId: "s-log",
        items: [
          { type: "fact", statement, scope: { kind: "user", ownerIds: ["alice"] }, sourceTurnIds: turnIds },
        ],
      });
      expect(reflected.statusCode).toBe(200);
      // Refused input too: a timestamp OpenSearch could not index, beside the values.
      const refused = await send("/ingest", {
        events: [{ ...fact, observedAt: "2026-01-01T00:00:00.1234567890Z" }],
      });
      expect(refused.statusCode).toBe(400);
      expect(lines.length).toBeGreaterThan(0);
      expectAbsent(lines.join("\n"), [live.email, live.phone, live.visa]);
    } finally {
      await dropIndices(traced);
      for (const index of Object.values(maturationIndices(traced.cortex.store))) {
        await traced.cortex.store.client.transport.request(
          { method: "DELETE", path: `/${index}` },
          { ignore: [404] },
        );
      }
      await traced.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});
