/**
 * Adversarial: erasure (security issue 15, finding 9). Alice's data goes in through every write path — ingest of a
 * statement, turn, tool result and document, reflection, the archive alone and shared with Bob, a dream proposal
 * and a promotion into git — next to Bob's, and Alice is erased. Each case then searches one place for her words
 * (every OpenSearch index of the Cortex, every file of the workspace and the archive, the git history and object
 * store, the proposals) and must find none, or checks what must outlive the erasure: Bob's data, the rewritten
 * shared document, the refusal of her late writes, the acceptance of her new ones.
 */
import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { memoryDocumentSchema } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { canonicalise } from "../../src/archive/document.js";
import { maturationIndices } from "../../src/knowledge/records.js";
import {
  adminAuth,
  type FullCortex,
  headersFor,
  ingestEvents,
  startCortex,
  startFullCortex,
} from "../helpers.js";
import * as stores from "./stores.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = inject("testbed").ollama;
const alice = { userId: "alice", householdId: "home", agentId: "main" };
const bob = { userId: "bob", householdId: "home", agentId: "main" };
const aliceOwns = { scope: "user", owner: { userId: "alice", householdId: "home" } };
const bobOwns = { scope: "user", owner: { userId: "bob", householdId: "home" } };

/** A made-up word no other test writes (letters only: nothing a redaction rule takes for a token). */
const word = (stem: string) =>
  `${stem}${[...randomBytes(8)].map((b) => "abcdefghijklmnopqrstuvwxyz"[b % 26]).join("")}`;
/** Alice's words, one per write path; her erasure must leave none of them anywhere. */
const A = Object.fromEntries(
  "knowledge claim dimension turn tool docTitle docSummary docText reflect reflectDimension reflectLater alone aloneSummary sharedTurn sharedReply sharedSummary"
    .split(" ")
    .map((key) => [key, word("alice")]),
) as Record<string, string>;
const B = { knowledge: word("bob"), reflect: word("bob"), sharedTurn: word("bob"), notes: word("bob") };
const hour = 3_600_000;
function expectNone(haystack: string, needles: Iterable<string>, where: string) {
  for (const needle of needles)
    expect(haystack.includes(needle), `${needle} is still in ${where}`).toBe(false);
}

describe("adversarial: erasure of a person's data from every store", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;
  let erasure: { auditId: string; erasedAt: string; counts: Record<string, number>; durationMs: number };
  let erasedAtMs = 0;
  let sharedHash = "";
  const aliceIds = new Set<string>();
  /** Her first reflection, as the gateway's reflect queue would send it again. */
  let firstReflection: Record<string, unknown> = {};

  const call = (method: "GET" | "POST", url: string, payload?: unknown, headers = headersFor(method, url)) =>
    app.inject({ method, url, headers, ...(payload === undefined ? {} : { payload: payload as object }) });
  const ok = async (method: "GET" | "POST", url: string, payload?: unknown) => {
    const response = await call(method, url, payload);
    expect(response.statusCode, `${url}: ${response.body}`).toBe(200);
    return response.json<Record<string, unknown>>();
  };
  const erasureRequest = {
    userId: "alice",
    requestedBy: "household-admin",
    reason: "Alice asked to be forgotten",
  };
  const erase = () => call("POST", "/admin/erasure", erasureRequest, adminAuth);
  const prefix = () => app.cortex.store.indices.knowledge.replace(/-knowledge$/, "");
  const openSearchText = () => stores.openSearchText(app);
  const reflect = async (principal: typeof alice, delta: Record<string, unknown>) => {
    const answer = await ok("POST", "/reflect", { principal, ...delta });
    for (const id of answer.created as string[]) if (principal === alice) aliceIds.add(id);
  };
  const statement = (type: string, text: string, owner: string) => ({
    type,
    statement: text,
    scope: { kind: "user", ownerIds: [owner] },
    sourceTurnIds: [`t-${randomBytes(3).toString("hex")}`],
    userDirective: true,
  });
  const dreamAndPromote = async (approvedBy: string) => {
    await ok("POST", "/dream", {});
    const { proposals } = (await ok("GET", "/proposals?status=pending")) as {
      proposals: { id: string; proposedDigest: string }[];
    };
    for (const p of proposals)
      await ok("POST", "/promote", { proposalId: p.id, approvedBy, expectedDigest: p.proposedDigest });
  };

  beforeAll(async () => {
    cortex = await startFullCortex({
      opensearchUrl,
      ...(ollama && { ollamaUrl: ollama.url, embedModel: ollama.embedModel }),
    });
    app = cortex.app;
    const observedAt = new Date(Date.now() - hour).toISOString();
    const mine = { ...aliceOwns, observedAt };
    const ingested = await ingestEvents(app, [
      {
        kind: "knowledge",
        ...mine,
        type: "fact",
        statement: `Alice keeps her diary in the ${A.knowledge} drawer`,
        claim: { subject: "alice", predicate: "diary place", object: `the ${A.claim} drawer` },
        dimensions: { hobby: [A.dimension] },
      },
      { kind: "turn", ...mine, role: "user", turnId: "t-1", text: `I told my sister about ${A.turn}` },
      { kind: "tool_result", ...mine, tool: "weather", output: `Forecast for ${A.tool}: sunny` },
      {
        kind: "document",
        ...mine,
        sourceKind: "transcript",
        sourceId: "alice-notes",
        title: `${A.docTitle} notes`,
        summary: `About ${A.docSummary}`,
        text: `The plan for ${A.docText} is set.\n\nWe leave on Monday.`,
      },
    ]);
    for (const item of ingested.items) for (const id of item.ids) aliceIds.add(id);
    const bobFact = `Bob repairs bicycles in the ${B.knowledge} garage`;
    await ingestEvents(app, [{ kind: "knowledge", ...bobOwns, type: "fact", statement: bobFact }]);
    firstReflection = {
      sessionId: "s-alice-1",
      items: [statement("preference", `Alice wants ${A.reflect} remembered forever`, "alice")],
      candidateDimensions: [{ name: "pet", value: A.reflectDimension, sourceTurnIds: ["t-2"] }],
    };
    await reflect(alice, firstReflection);
    await reflect(bob, {
      sessionId: "s-bob-1",
      items: [statement("fact", `Bob wants ${B.reflect} kept`, "bob")],
    });
    await ok("POST", "/retrieve", { principal: alice, requestText: "where is the diary", tokenBudget: 500 });
    await app.cortex.usage.flush();
    await dreamAndPromote("household-admin");
    // A later statement of hers: the next proposal for her file waits, pending, with her old entries in its diff.
    await reflect(alice, {
      sessionId: "s-alice-2",
      observedAt,
      items: [statement("preference", `Alice also loves ${A.reflectLater} in spring`, "alice")],
    });
    await ok("POST", "/dream", {});

    const createdAt = new Date(Date.now() - 2 * hour).toISOString();
    const source = { sessionId: "s-archive", channel: "telegram" };
    await ok("POST", "/archive", {
      document: {
        createdAt,
        source,
        messages: [{ role: "user", content: `alone with ${A.alone}`, authorId: "alice" }],
        consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
      },
      summary: `Alice on ${A.aloneSummary}`,
    });
    const shared = await ok("POST", "/archive", {
      document: {
        createdAt,
        source,
        messages: [
          { role: "system", content: "household assistant" },
          { role: "user", content: `my secret is ${A.sharedTurn}`, authorId: "alice" },
          { role: "assistant", content: `noted, ${A.sharedReply}` },
          { role: "user", content: `what about dinner and ${B.sharedTurn}`, authorId: "bob" },
          { role: "assistant", content: "pasta tonight" },
        ],
        consentScope: { ownerIds: ["alice", "bob"], privacy: "household", allowRecall: true },
      },
      summary: `Alice said ${A.sharedSummary}; Bob asked about dinner`,
    });
    sharedHash = shared.hash as string;
    // Bob's own notes name the shared document by its hash.
    await ingestEvents(app, [
      {
        kind: "document",
        ...bobOwns,
        sourceKind: "transcript",
        sourceId: sharedHash,
        text: `Bob's notes on ${B.notes} from the shared chat`,
      },
    ]);
    expect(await openSearchText()).toContain(A.knowledge);

    const response = await erase();
    expect(response.statusCode, response.body).toBe(200);
    erasure = response.json();
    erasedAtMs = Date.now();
  });
  afterAll(async () => {
    if (!cortex) return;
    const path = `/${prefix()}-erasures`;
    await app.cortex.store.client.transport.request({ method: "DELETE", path }, { ignore: [404] });
    await cortex.stop();
  });

  it("answers with counts per store and audits who, when and how much, never what", async () => {
    const { counts } = erasure;
    expect(counts.knowledgeDeleted).toBeGreaterThanOrEqual(3);
    expect(counts.chunksDeleted).toBeGreaterThanOrEqual(4);
    expect(counts.archiveErased).toBe(1);
    expect(counts.archiveRewritten).toBe(1);
    expect(counts.referencesRepointed).toBeGreaterThanOrEqual(1);
    expect(counts.proposalsDeleted).toBeGreaterThanOrEqual(2);
    expect(counts.receiptsTombstoned).toBe(2);
    expect(counts.gitCommitsDropped).toBe(1);
    expect(counts.workspaceFilesChanged).toBe(1);
    expect(counts.dimensionValuesRemoved).toBeGreaterThanOrEqual(2);
    const { body } = await app.cortex.store.client.get({
      index: maturationIndices(app.cortex.store).records,
      id: `audit:${erasure.auditId}`,
    });
    const { userId, requestedBy } = erasureRequest;
    const audited = {
      action: "erasure",
      userId,
      requestedBy,
      caller: "admin",
      erasedAt: erasure.erasedAt,
      counts,
    };
    expect(body._source).toMatchObject({ kind: "audit", body: audited });
    expectNone(JSON.stringify(body._source), Object.values(A), "the audit record");
  });

  it("leaves no copy of her text, nor any of her item ids, in any OpenSearch index of the Cortex", async () => {
    const stored = await openSearchText();
    expectNone(stored, Object.values(A), "OpenSearch");
    expectNone(stored, aliceIds, "OpenSearch");
    expect(stored).toContain(B.knowledge);
  });

  it("leaves no copy in any file of the workspace or the archive", async () => {
    const roots = [cortex.workspace, cortex.archiveDir];
    expect(await stores.filesHolding(roots, [...Object.values(A), ...aliceIds])).toEqual([]);
    await expect(readFile(join(cortex.workspace, "artifacts/users/alice/facts.md"))).rejects.toThrow();
    expect(await readFile(join(cortex.workspace, "artifacts/users/bob/facts.md"), "utf8")).toContain(
      B.reflect,
    );
  });

  it("leaves none in the git history, reflogs or object store, and nothing unreachable after gc", async () => {
    const repo = cortex.workspace;
    const history = await stores.git(repo, "log", "-p", "--all", "--format=%H%n%an%n%B");
    const objects = await stores.git(repo, "cat-file", "--batch-all-objects", "--batch");
    const hers = [...Object.values(A), ...aliceIds];
    expectNone(history, hers, "git log -p --all");
    expectNone(objects, hers, "the object store");
    expectNone(await stores.git(repo, "reflog", "--all"), hers, "the reflogs");
    expect(await stores.git(repo, "fsck", "--unreachable", "--no-reflogs", "--full")).toBe("");
    expect(history).toContain(B.reflect);
    expect(await stores.git(repo, "status", "--porcelain")).toBe("");
  });

  it("leaves no proposal quoting or naming her items; Bob's promoted proposal names its rewritten commit", async () => {
    const { proposals } = (await ok("GET", "/proposals")) as {
      proposals: { state: string; artifactPath: string; promotion?: { commitId: string } }[];
    };
    expectNone(JSON.stringify(proposals), [...Object.values(A), ...aliceIds], "the proposals");
    const bobs = proposals.find(
      (p) => p.artifactPath === "artifacts/users/bob/facts.md" && p.state === "promoted",
    );
    expect(await stores.git(cortex.workspace, "cat-file", "-t", bobs?.promotion?.commitId ?? "none")).toBe(
      "commit\n",
    );
  });

  it("keeps Bob's data; the shared document, rewritten without her, verifies under its new hash everywhere", async () => {
    const search = (await ok("POST", "/archive/search", { principal: bob, limit: 10 })) as {
      results: { hash: string; summary: string }[];
    };
    expect(search.results).toHaveLength(1);
    const [rewritten] = search.results;
    expect(rewritten?.hash).not.toBe(sharedHash);
    expect(rewritten?.summary).toContain(B.sharedTurn);
    const recalled = (await ok("GET", `/archive/${rewritten?.hash}?userId=bob&agentId=main`)) as {
      document: unknown;
    };
    const document = memoryDocumentSchema.parse(recalled.document);
    expect(canonicalise(document).hash).toBe(rewritten?.hash);
    expect(document.messages.map((m) => m.content)).toEqual([
      "household assistant",
      `what about dinner and ${B.sharedTurn}`,
      "pasta tonight",
    ]);
    expect(document.consentScope.ownerIds).toEqual(["bob"]);
    expect(await ok("GET", "/archive/verify")).toMatchObject({ checked: 1, corrupt: [] });
    const stored = await openSearchText();
    expect(stored).toContain(`"sourceId":"${rewritten?.hash}"`);
    expect(stored).not.toContain(sharedHash);
    expect(stored).toContain(B.notes);
  });

  it("refuses her writes observed at or before the erasure with 410, which the hooks drop (never retried)", async () => {
    const late = (observedAt: string) => ({
      kind: "tool_result",
      ...aliceOwns,
      observedAt,
      tool: "w",
      output: A.tool,
    });
    const before = new Date(Date.parse(erasure.erasedAt) - hour).toISOString();
    for (const observedAt of [before, erasure.erasedAt]) {
      const response = await call("POST", "/ingest", { events: [late(observedAt)] });
      expect(response.statusCode, response.body).toBe(410);
      expect(response.json<{ message: string }>().message).toContain("do not retry");
    }
    // One late event refuses its batch; the hooks then send the events one by one, and Bob's goes in.
    const bobs = { kind: "turn", ...bobOwns, role: "user", turnId: "t-b", text: "hi" };
    expect((await call("POST", "/ingest", { events: [bobs, late(before)] })).statusCode).toBe(410);
    expect((await call("POST", "/ingest", { events: [bobs] })).statusCode).toBe(200);
    const reflected = await call("POST", "/reflect", {
      principal: alice,
      sessionId: "s-late",
      observedAt: before,
      items: [statement("fact", `late ${A.reflect}`, "alice")],
    });
    expect(reflected.statusCode).toBe(410);
    const archived = await call("POST", "/archive", {
      document: {
        createdAt: before,
        source: { sessionId: "s-late", channel: "telegram" },
        messages: [{ role: "user", content: `late ${A.alone}` }],
        consentScope: { ownerIds: ["alice"], privacy: "private", allowRecall: true },
      },
      summary: "late",
    });
    expect(archived.statusCode).toBe(410);
    expectNone(await openSearchText(), Object.values(A), "OpenSearch");
  });

  it("refuses a replay of a reflection applied before the erasure, even one that says nothing of when", async () => {
    // Without observedAt it counts as observed on arrival, after the erasure; its emptied receipt refuses it.
    const replay = await call("POST", "/reflect", { principal: alice, ...firstReflection });
    expect(replay.statusCode, replay.body).toBe(410);
    expect(replay.json<{ message: string }>().message).toContain("applied before an erasure");
  });

  it("still refuses the late write after a restart: the tombstone lives in OpenSearch", async () => {
    const restarted = await startCortex({ opensearchUrl, indexPrefix: prefix() });
    const turn = { role: "user", turnId: "t-r", text: "x" };
    try {
      const response = await restarted.inject({
        method: "POST",
        url: "/ingest",
        headers: headersFor("POST", "/ingest"),
        payload: { events: [{ kind: "turn", ...aliceOwns, observedAt: erasure.erasedAt, ...turn }] },
      });
      expect(response.statusCode).toBe(410);
    } finally {
      await restarted.close();
    }
  });

  it("erases again without error, finding and changing nothing", async () => {
    const again = await erase();
    expect(again.statusCode, again.body).toBe(200);
    const { counts } = again.json<{ counts: Record<string, number> }>();
    expect(Object.entries(counts).filter(([, n]) => n !== 0)).toEqual([]);
    expectNone(await openSearchText(), Object.values(A), "OpenSearch");
  });

  it("accepts and keeps her new writes, observed after the erasure", async () => {
    const fresh = word("fresh");
    const now = new Date().toISOString();
    const event = {
      kind: "knowledge",
      ...aliceOwns,
      observedAt: now,
      type: "fact",
      statement: `Alice likes ${fresh}`,
    };
    const answer = await ingestEvents(app, [event]);
    expect(answer.created).toBe(1);
    expect(await openSearchText()).toContain(fresh);
  });

  it("runs one erasure at a time; promotion, denial and dream answer 503 while one runs; a pasted token is redacted", async () => {
    const token = "ghp_abcdefghijklmnopqrstuvwxyz0123";
    const carol = {
      userId: "carol",
      requestedBy: "household-admin",
      reason: `asked by phone, ticket ${token}`,
    };
    const first = call("POST", "/admin/erasure", carol, adminAuth);
    const second = call("POST", "/admin/erasure", carol, adminAuth);
    let settled = false;
    void Promise.all([first, second]).then(() => {
      settled = true;
    });
    const refusals: { statusCode: number; retryAfter: unknown; message: string }[] = [];
    while (!settled && refusals.length < 3) {
      const responses = await Promise.all([
        call("POST", "/promote", { proposalId: "no-such-proposal", approvedBy: "ops" }),
        call("POST", "/proposals/no-such-proposal/deny", { deniedBy: "ops" }),
        call("POST", "/dream", { dryRun: true, maxProposals: 0, full: false }),
      ]);
      for (const r of responses)
        if (r.statusCode === 503)
          refusals.push({
            statusCode: r.statusCode,
            retryAfter: r.headers["retry-after"],
            message: r.json<{ message: string }>().message,
          });
    }
    const answers = await Promise.all([first, second]);
    for (const answer of answers) expect(answer.statusCode, answer.body).toBe(200);
    expect(refusals.length).toBeGreaterThan(0);
    for (const refusal of refusals) {
      expect(refusal.retryAfter).toBeDefined();
      expect(refusal.message).toContain("erasure");
    }
    const { auditId } = answers[0]?.json<{ auditId: string }>() ?? { auditId: "" };
    const { body } = await app.cortex.store.client.get({
      index: maturationIndices(app.cortex.store).records,
      id: `audit:${auditId}`,
    });
    const audited = JSON.stringify(body._source);
    expect(audited).not.toContain(token);
    expect(body._source).toMatchObject({
      body: { caller: "admin", reason: expect.stringContaining("ticket") },
    });
    // After it, decisions are heard again (the proposal does not exist).
    const after = await call("POST", "/proposals/no-such-proposal/deny", { deniedBy: "ops" });
    expect(after.statusCode).toBe(404);
  });

  it("leaves no byte of her text in OpenSearch's files once the shard's retention lease moved on", async (context) => {
    const folders = await stores.indexFolders(app);
    // OpenSearch in a container: its files are not on this host to read.
    if (folders === undefined) return context.skip();
    const onDisk = () => stores.filesHolding(folders, Object.values(A));
    // The erasure merges deleted documents out again 40 s and 90 s after it answered.
    let found = await onDisk();
    while (found.length > 0 && Date.now() < erasedAtMs + 100_000) {
      await new Promise((resolve) => setTimeout(resolve, 5_000));
      found = await onDisk();
    }
    expect(found).toEqual([]);
  }, 150_000);
});
