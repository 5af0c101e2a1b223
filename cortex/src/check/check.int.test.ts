import { randomBytes } from "node:crypto";
import { readFile, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { ConsistencyReport, ExplicitSaveResponse } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type FullCortex, startFullCortex } from "../../test/helpers.js";
import { maturationIndices } from "../knowledge/records.js";
import { request } from "../store/client.js";

// REMRAM_TESTBED=opensearch,ollama: the check over real stores (OpenSearch, the archive's files, a git repository),
// first sound, then with each kind of damage made by hand the way rot, a crash or a bad restore would leave it.
const ana = { userId: "ana", householdId: "h1", agentId: "main" };
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ollama = testbedEndpoints("ollama");

describe("the consistency check (POST /admin/check) on real stores", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;
  const saved: ExplicitSaveResponse[] = [];
  let transcript = "";

  const post = (
    url: string,
    payload?: Record<string, unknown>,
    caller: "gateway" | "operator" | "admin" = "gateway",
  ) => app.inject({ method: "POST", url, headers: bearer(caller), ...(payload ? { payload } : {}) });
  const check = async (caller: "operator" | "admin" = "operator") => {
    const response = await post("/admin/check", undefined, caller);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ConsistencyReport>();
  };
  const store = () => app.cortex.store;

  beforeAll(async () => {
    cortex = await startFullCortex({
      opensearchUrl,
      ollamaUrl: ollama.url,
      embedModel: ollama.embedModel,
      embedTimeoutMs: 20_000,
      archiveTieringIntervalMinutes: 0,
    });
    app = cortex.app;
    const remember = async (statement: string) => {
      const response = await post("/remember", { principal: ana, statement, scope: "user" });
      expect(response.statusCode, response.body).toBe(200);
      const save = response.json<ExplicitSaveResponse>();
      expect(save.embedded).toBe(true);
      saved.push(save);
      return save;
    };
    // The first save's page is committed, as the operator does after an approval; the second's stays pending.
    const first = (await remember("Ana keeps the spare key behind the fuse box")).proposal;
    if (first.status !== "pending") throw new Error(`no pending proposal: ${JSON.stringify(first)}`);
    const promoted = await post(
      "/promote",
      { proposalId: first.id, approvedBy: "household-admin" },
      "operator",
    );
    expect(promoted.statusCode, promoted.body).toBe(200);
    expect((await remember("Ana's bike lock code is in the blue notebook")).proposal.status).toBe("pending");
    const at = "2026-05-01T09:00:00.000Z";
    const filed = await post("/archive/transcripts", {
      principal: ana,
      sessionId: `session-${randomBytes(4).toString("hex")}`,
      channel: "telegram",
      endReason: "reset",
      endedAt: at,
      messages: [
        { role: "user", content: "Remind me where the spare key is", at },
        { role: "assistant", content: "Behind the fuse box.", at },
      ],
    });
    expect(filed.statusCode, filed.body).toBe(200);
    transcript = filed.json<{ hash: string }>().hash;
  }, 300_000);
  afterAll(async () => {
    await cortex?.stop();
  });

  it("finds sound stores consistent and counts what it read; only the operator and the admin may ask", async () => {
    const report = await check();
    expect(report.findings).toEqual([]);
    expect(report).toMatchObject({ consistent: true, byKind: {} });
    expect(report.counts).toMatchObject({
      knowledge: 2,
      vectors: 2,
      awaitingVector: 0,
      archivedDocuments: 1,
    });
    expect(report.counts.proposals).toBeGreaterThanOrEqual(1);
    expect(report.counts.commits).toBeGreaterThanOrEqual(1);
    expect(report.counts.chunks).toBeGreaterThanOrEqual(2);
    expect((await check("admin")).consistent).toBe(true);
    for (const caller of ["gateway", "app"] as const) {
      const refused = await app.inject({ method: "POST", url: "/admin/check", headers: bearer(caller) });
      expect(refused.statusCode, caller).toBe(403);
    }
  });

  it("reports each kind of damage by id, keeps reporting it, and exports it as metrics", async () => {
    const [key, lock] = saved as [ExplicitSaveResponse, ExplicitSaveResponse];
    const { knowledge, vectors, chunks } = store().indices;
    const archiveIndex = maturationIndices(store()).archive;
    // The lock's object is deleted without its vector (and its pending page now names knowledge that is gone).
    await request(store(), "DELETE", `/${knowledge}/_doc/${lock.id}?refresh=true`);
    // The key's vector says the object is shared with the household: the k-NN gate would decide on that.
    await request(store(), "POST", `/${vectors}/_update/${key.id}?refresh=true`, {
      doc: { scope: "household" },
    });
    // A summary entry and a chunk naming a transcript the archive never held (a restore that missed files).
    const lost = "f".repeat(64);
    await request(store(), "PUT", `/${archiveIndex}/_doc/${lost}?refresh=true`, {
      hash: lost,
      ownerIds: ["ana"],
    });
    await request(store(), "PUT", `/${chunks}/_doc/lost-chunk?refresh=true`, {
      id: "lost-chunk",
      sourceId: lost,
      sourceKind: "transcript",
    });
    // A bit of the archived transcript rots on disk.
    const file = join(cortex.archiveDir, "hot", transcript.slice(0, 2), `${transcript}.json`);
    await writeFile(file, (await readFile(file, "utf8")).replace("fuse box", "fuse b0x"));
    // The promotion commit is rewritten without its trailer, and the artifact's blob is lost.
    const git = simpleGit(cortex.workspace);
    await git.raw(["commit", "--amend", "-m", "Edited by hand"]);
    const artifact = (await git.raw(["ls-tree", "-r", "--format=%(objectname)", "HEAD"]))
      .trim()
      .split("\n")[0];
    if (!artifact) throw new Error("the promotion committed no file");
    await rm(join(cortex.workspace, ".git", "objects", artifact.slice(0, 2), artifact.slice(2)));

    const report = await check("admin");
    expect(report.consistent).toBe(false);
    expect(report.byKind).toEqual({
      "archive-document-corrupt": 1,
      "archive-entry-without-document": 1,
      "chunk-without-source": 1,
      "vector-without-object": 1,
      "vector-gate-stale": 1,
      "proposal-source-missing": 1,
      "proposal-commit-missing": 1,
      "repository-unsound": expect.any(Number),
    });
    const byKind = (kind: string) => report.findings.filter((finding) => finding.kind === kind);
    expect(byKind("archive-document-corrupt")[0]?.id).toBe(transcript);
    expect(byKind("archive-entry-without-document")[0]?.id).toBe(lost);
    expect(byKind("chunk-without-source")[0]?.id).toBe("lost-chunk");
    expect(byKind("vector-without-object")[0]?.id).toBe(lock.id);
    expect(byKind("vector-gate-stale")[0]).toMatchObject({
      id: key.id,
      detail: expect.stringContaining("scope"),
    });
    expect(byKind("proposal-source-missing")[0]?.detail).toContain(lock.id);
    expect(
      byKind("repository-unsound")
        .map((finding) => finding.detail)
        .join("\n"),
    ).toContain(artifact);
    // Ids and what is wrong, never what a person said.
    expect(JSON.stringify(report)).not.toMatch(/fuse|notebook|spare key/i);

    const metrics = await app.inject({ method: "GET", url: "/metrics" });
    expect(metrics.body).toContain('cortex_consistency_findings{kind="vector-without-object"} 1');
    expect(metrics.body).toContain('cortex_consistency_findings{kind="archive-document-corrupt"} 1');
    expect(metrics.body).toMatch(/cortex_consistency_last_check_timestamp_seconds \d/);
  });
});
