import { randomBytes } from "node:crypto";
import { mkdtemp, readdir, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { transcriptArchiveRequest } from "@remram/contract";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { buildApp } from "../app.js";
import { cortexConfig } from "../config.js";
import { maturationIndices } from "../knowledge/records.js";
import { maturationPlugin } from "../maturation.js";
import { bearer, testCredentials } from "../testing/callers.js";
import { canonicalise, redactDocument } from "./document.js";
import { transcriptDocument } from "./transcript.js";

// REMRAM_TESTBED=opensearch (add ollama for vectors): a session's transcript through the real Cortex routes into the
// archive on disk and the chunks index in OpenSearch, then back out through search, recall and retrieval.
const alice = { userId: "alice", householdId: "h1", agentId: "main" };
const bob = { userId: "bob", householdId: "h1", agentId: "main" };
const secret = "sk-proj-Zx81mQ0vTT4kLs9aPq2wRt6yUe3iOp7aSd5fGh1jKl";
const day = (n: number) => new Date(Date.UTC(2026, 4, 1 + n, 9)).toISOString();

function transcript(overrides: Record<string, unknown> = {}) {
  return {
    principal: alice,
    sessionId: `session-${randomBytes(4).toString("hex")}`,
    channel: "telegram",
    endReason: "reset",
    endedAt: day(0),
    messages: [
      { role: "user", content: "Can you help me plan the allotment for spring?", at: day(0) },
      { role: "assistant", content: "Of course. What do you want to grow?", at: day(0) },
      { role: "user", content: `Here is the seed shop login key ${secret}, order for me.`, at: day(0) },
      { role: "assistant", content: "I will not store keys. What else?", at: day(0) },
      {
        role: "user",
        content:
          "The rhubarb crowns go beside the compost heap, and the quince tree needs pruning in February.",
        at: day(0),
      },
      {
        role: "assistant",
        content:
          "Noted: rhubarb by the compost, quince pruned in February. One more thing from your notes last year: " +
          "the medlar sapling goes along the west fence, where the frost pocket is smallest.",
        at: day(0),
      },
    ],
    ...overrides,
  };
}

describe("session transcripts into the archive and retrieval, on a real OpenSearch", () => {
  let app: FastifyInstance;
  let archiveDir: string;
  let workspace: string;
  let now = day(0);

  const post = (url: string, payload: unknown, caller: keyof typeof testCredentials = "gateway") =>
    app.inject({ method: "POST", url, headers: bearer(caller), payload: payload as Record<string, unknown> });
  const recall = (hash: string, who: { userId: string; agentId: string }) =>
    app.inject({
      method: "GET",
      url: `/archive/${hash}?userId=${who.userId}&agentId=${who.agentId}`,
      headers: bearer("gateway"),
    });
  const search = async (principal: typeof alice, query: string) => {
    const response = await post("/archive/search", { principal, query });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ results: { hash: string; summary: string }[] }>().results;
  };
  const retrieve = async (principal: typeof alice, requestText: string) => {
    const response = await post("/retrieve", {
      principal,
      requestText,
      tokenBudget: 2000,
      modelLocation: "local",
    });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<{
      bundle: { text: string };
      chunks: { text: string; level: string; documentHash?: string | null }[];
    }>();
    // The bundle the plugin injects cites what memory_get takes, for every transcript passage it holds.
    for (const chunk of body.chunks) {
      if (chunk.documentHash) expect(body.bundle.text).toContain(`archive ${chunk.documentHash}`);
    }
    return body.chunks;
  };

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
      indexPrefix: `it-tr-${randomBytes(4).toString("hex")}`,
      logLevel: "silent",
      usageFlushIntervalMs: 3_600_000,
      // Tiering only when the test asks for it.
      archiveTieringIntervalMinutes: 0,
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
    await rm(workspace, { recursive: true, force: true });
    await rm(archiveDir, { recursive: true, force: true });
  });

  let hash = "";
  const session = transcript();

  it("archives the transcript under the hash of its redacted canonical bytes, once, and chunks it citing the hash", async () => {
    const first = await post("/archive/transcripts", session);
    expect(first.statusCode, first.body).toBe(200);
    const filed = first.json<{
      hash: string;
      stored: boolean;
      summary: string;
      chunks: { ids: string[]; created: number; duplicates: number };
    }>();
    const expected = canonicalise(
      redactDocument(transcriptDocument(transcriptArchiveRequest.parse(session))),
    );
    expect(filed.hash).toBe(expected.hash);
    expect(filed.stored).toBe(true);
    expect(filed.summary).toContain("Conversation on telegram");
    expect(filed.chunks.created).toBe(filed.chunks.ids.length);
    expect(filed.chunks.ids.length).toBeGreaterThanOrEqual(3);
    hash = filed.hash;
    expect(await readdir(join(archiveDir, "hot", hash.slice(0, 2)))).toEqual([`${hash}.json`]);

    // The hooks resend after a lost answer: nothing new is stored.
    const again = await post("/archive/transcripts", session);
    expect(again.json()).toMatchObject({
      hash,
      stored: false,
      chunks: { created: 0, duplicates: filed.chunks.ids.length },
    });
  });

  it("gives the owner the full document back, credentials redacted, and refuses another user", async () => {
    const own = await recall(hash, alice);
    expect(own.statusCode, own.body).toBe(200);
    const text = JSON.stringify(own.json());
    expect(text).toContain("quince tree needs pruning");
    expect(text).not.toContain(secret);
    const other = await recall(hash, bob);
    expect(other.statusCode).toBe(403);
    expect(other.json<{ message: string }>().message).toContain("owners");
  });

  it("retrieves its chunks with the archive hash cited, for its owner only", async () => {
    const chunks = await retrieve(alice, "Where do the rhubarb crowns go, and when is the quince pruned?");
    const cited = chunks.filter((chunk) => chunk.documentHash === hash);
    expect(cited.length).toBeGreaterThan(0);
    expect(cited.map((chunk) => chunk.text).join(" ")).toMatch(/rhubarb/i);
    const bobs = await retrieve(bob, "Where do the rhubarb crowns go, and when is the quince pruned?");
    expect(bobs.filter((chunk) => chunk.documentHash === hash)).toEqual([]);
  });

  it("finds the transcript by a passage its summary does not hold, returning the summary only", async () => {
    const results = await search(alice, "medlar sapling west fence");
    expect(results.map((result) => result.hash)).toContain(hash);
    const found = results.find((result) => result.hash === hash);
    expect(found?.summary).not.toContain("medlar");
    expect(found).not.toHaveProperty("document");
    expect(await search(bob, "medlar sapling west fence")).toEqual([]);
  });

  it("keeps a transcript that may not be recalled to its summary, and a secret one out of search and recall", async () => {
    const closed = await post(
      "/archive/transcripts",
      transcript({
        allowRecall: false,
        messages: [{ role: "user", content: "The greenhouse door code is long." }],
      }),
    );
    expect(closed.statusCode, closed.body).toBe(200);
    const closedHash = closed.json<{ hash: string }>().hash;
    expect((await recall(closedHash, alice)).json<{ message: string }>().message).toContain("consent");
    expect((await search(alice, "greenhouse door")).map((result) => result.hash)).toContain(closedHash);

    const hidden = await post(
      "/archive/transcripts",
      transcript({
        privacy: "secret",
        messages: [{ role: "user", content: "The safe behind the painting." }],
      }),
    );
    const hiddenHash = hidden.json<{ hash: string }>().hash;
    expect((await recall(hiddenHash, alice)).statusCode).toBe(403);
    expect((await search(alice, "safe painting")).map((result) => result.hash)).not.toContain(hiddenHash);
  });

  it("refuses a malformed transcript whole, and a deleted session's", async () => {
    expect((await post("/archive/transcripts", transcript({ messages: [] }))).statusCode).toBe(400);
    expect((await post("/archive/transcripts", transcript({ endReason: "deleted" }))).statusCode).toBe(400);
    expect(
      (await post("/archive/transcripts", transcript({ part: { index: 2, count: 2 } }))).statusCode,
    ).toBe(400);
    // Only the gateway sends transcripts.
    expect((await post("/archive/transcripts", transcript(), "app")).statusCode).toBe(403);
  });

  it("moves idle documents down the tiers, still recallable, and a recall keeps one where it is", async () => {
    now = day(40);
    const kept = await recall(hash, alice);
    expect(kept.statusCode).toBe(200);
    now = day(200);
    const pass = await post("/archive/tiering", undefined, "operator");
    expect(pass.statusCode, pass.body).toBe(200);
    // The recalled transcript was idle 160 days (warm); the others 200 days (cold, one bundle).
    expect(pass.json()).toMatchObject({ checked: 3, movedToWarm: 1, movedToCold: 2, coldBundles: 1 });
    const files = await readdir(archiveDir, { recursive: true });
    expect(files.filter((file) => file.endsWith(".bundle"))).toHaveLength(1);
    expect(files.filter((file) => file.endsWith(".json.zst"))).toHaveLength(1);
    const again = await recall(hash, alice);
    expect(again.statusCode).toBe(200);
    expect(JSON.stringify(again.json())).toContain("quince tree needs pruning");
    expect((await post("/archive/tiering", undefined, "operator")).json()).toMatchObject({
      movedToWarm: 0,
      movedToCold: 0,
    });
  });

  it("erases a person's transcripts from archive and chunks, and refuses them coming back", async () => {
    const erased = await post(
      "/admin/erasure",
      { userId: "alice", requestedBy: "alice", reason: "test" },
      "admin",
    );
    expect(erased.statusCode, erased.body).toBe(200);
    expect(erased.json<{ archiveErased: number }>().archiveErased).toBe(3);
    expect((await recall(hash, alice)).statusCode).toBe(404);
    expect((await retrieve(alice, "rhubarb crowns quince")).filter((c) => c.documentHash === hash)).toEqual(
      [],
    );
    const files = await readdir(archiveDir, { recursive: true });
    expect(files.filter((file) => /\.(json|zst|gz|bundle)$/.test(file))).toEqual([]);
    expect((await post("/archive/transcripts", session)).statusCode).toBe(410);
  });
});
