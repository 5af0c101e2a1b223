import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ConsistencyReport, ExplicitSaveResponse, StorageStatus } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { canMount, fillVolume, mountTmpfs, unmount } from "../src/testing/volumes.js";
import { bearer, type FullCortex, startFullCortex } from "./helpers.js";

// REMRAM_TESTBED=opensearch, as root (CI and the test machine): Cortex's workspace and archive on tmpfs volumes of
// 2 MiB that the test fills up. A write to a full volume is refused with 507 and nothing half-written; the caller
// (the operator, the gateway's queue) keeps it and retries; freeing space is all the repair there is.
const { url: opensearchUrl } = testbedEndpoints("opensearch");
const ana = { userId: "ana", householdId: "h1", agentId: "main" };

describe.skipIf(!canMount)("Cortex on volumes that fill up", () => {
  let volumes: string;
  let workspace: string;
  let archiveDir: string;
  let cortex: FullCortex;
  let app: FastifyInstance;
  const post = (url: string, payload: unknown, caller: "gateway" | "operator" = "gateway") =>
    app.inject({ method: "POST", url, headers: bearer(caller), payload: payload as Record<string, unknown> });

  beforeAll(async () => {
    volumes = await mkdtemp(join(tmpdir(), "remram-volumes-"));
    workspace = join(volumes, "workspace");
    archiveDir = join(volumes, "archive");
    for (const dir of [workspace, archiveDir]) await mountTmpfs(dir, "2m");
    cortex = await startFullCortex(
      { opensearchUrl, archiveTieringIntervalMinutes: 0 },
      { workspace, archiveDir },
    );
    app = cortex.app;
  }, 120_000);
  afterAll(async () => {
    await cortex?.stop();
    for (const dir of [workspace, archiveDir]) await unmount(dir).catch(() => undefined);
    await rm(volumes, { recursive: true, force: true });
  });

  it("refuses a promotion into a full workspace with 507, commits nothing, and promotes once space is freed", async () => {
    const saved = await post("/remember", {
      principal: ana,
      statement: "Ana's spare key is with Bo",
      scope: "user",
    });
    expect(saved.statusCode, saved.body).toBe(200);
    const proposal = saved.json<ExplicitSaveResponse>().proposal;
    if (proposal.status !== "pending") throw new Error(`no pending proposal: ${JSON.stringify(proposal)}`);
    // The repository exists before the volume fills (Cortex makes it at its first git work, here a check).
    const check = await app.inject({ method: "POST", url: "/admin/check", headers: bearer("admin") });
    expect(check.statusCode, check.body).toBe(200);
    const git = simpleGit(workspace);
    const head = async () =>
      (await git.raw(["rev-parse", "--verify", "--quiet", "HEAD"]).catch(() => "")).trim();
    const headBefore = await head();

    const filler = join(workspace, ".filler");
    await fillVolume(filler);
    try {
      const approval = { proposalId: proposal.id, approvedBy: "household-admin" };
      const refused = await post("/promote", approval, "operator");
      expect(refused.statusCode, refused.body).toBe(507);
      expect(refused.json<{ message: string }>().message).toMatch(
        /^Cortex's volume is full, so nothing was stored/,
      );
      expect(refused.headers["retry-after"]).toBeDefined();
      expect(await head()).toBe(headBefore);
      expect((await git.raw(["status", "--porcelain", "--untracked-files=all"])).trim()).toBe("?? .filler");
      const pending = await app.inject({ url: "/proposals?status=pending", headers: bearer("operator") });
      expect(pending.json<{ proposals: { id: string }[] }>().proposals.map((p) => p.id)).toContain(
        proposal.id,
      );
    } finally {
      await rm(filler);
    }
    const promoted = await post(
      "/promote",
      { proposalId: proposal.id, approvedBy: "household-admin" },
      "operator",
    );
    expect(promoted.statusCode, promoted.body).toBe(200);
    expect((await git.raw(["log", "-1", "--format=%B"])).trim()).toContain(`Remram-Proposal: ${proposal.id}`);
  });

  it("refuses a transcript into a full archive with 507 and stores it when the gateway retries after space is freed", async () => {
    const at = "2026-05-01T09:00:00.000Z";
    const transcript = {
      principal: ana,
      sessionId: "session-full-disk",
      channel: "telegram",
      endReason: "reset",
      endedAt: at,
      messages: [
        { role: "user", content: `Where did we put the ladder? ${"Some more words. ".repeat(4000)}`, at },
        { role: "assistant", content: "In the garden shed.", at },
      ],
    };
    const filler = join(archiveDir, "filler");
    const volumeSample = async (name: string) =>
      Number(
        new RegExp(`${name}\\{volume="archive"\\} (\\d+)`).exec(
          (await app.inject({ url: "/metrics" })).body,
        )?.[1],
      );
    expect(await volumeSample("cortex_volume_size_bytes")).toBe(2 * 1024 * 1024);
    expect(await volumeSample("cortex_volume_available_bytes")).toBeGreaterThan(1024 * 1024);
    await fillVolume(filler);
    try {
      expect(await volumeSample("cortex_volume_available_bytes")).toBe(0);
      const refused = await post("/archive/transcripts", transcript);
      expect(refused.statusCode, refused.body).toBe(507);
      const metrics = await app.inject({ method: "GET", url: "/metrics" });
      expect(metrics.body).toContain('cortex_volume_full_refusals_total{route="/archive/transcripts"} 1');
      // What the appliance's StorageAvailable condition is made from.
      const full = (
        await app.inject({ method: "GET", url: "/admin/storage", headers: bearer("operator") })
      ).json<StorageStatus>();
      expect(full.volumes.find((volume) => volume.name === "archive")).toEqual({
        name: "archive",
        sizeBytes: 2 * 1024 * 1024,
        availableBytes: 0,
      });
      expect(full.recentRefusal).toMatchObject({ cause: "volume" });
    } finally {
      await rm(filler);
    }
    const filed = await post("/archive/transcripts", transcript);
    expect(filed.statusCode, filed.body).toBe(200);
    const freed = (
      await app.inject({ method: "GET", url: "/admin/storage", headers: bearer("operator") })
    ).json<StorageStatus>();
    expect(freed.recentRefusal).toBeUndefined();
    const { hash } = filed.json<{ hash: string }>();
    const recalled = await app.inject({
      method: "GET",
      url: `/archive/${hash}?userId=ana&householdId=h1&agentId=main`,
      headers: bearer("gateway"),
    });
    expect(recalled.statusCode, recalled.body).toBe(200);

    // Nothing the full volumes refused left anything half-written behind.
    const check = await app.inject({ method: "POST", url: "/admin/check", headers: bearer("admin") });
    expect(check.json<ConsistencyReport>()).toMatchObject({ consistent: true, findings: [] });
  });
});
