import { randomBytes } from "node:crypto";
import type { PersonExport } from "@remram/contract";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { bearer, type FullCortex, startFullCortex, type testCredentials } from "../../test/helpers.js";

// REMRAM_TESTBED=opensearch: a person's export through the real route, from the real knowledge and archive indices.
const ana = { userId: "ana", householdId: "h1", agentId: "main" };
const bo = { userId: "bo", householdId: "h1", agentId: "main" };
type Caller = keyof typeof testCredentials;

describe("a person's export (POST /admin/export) on a real OpenSearch", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;
  const anaTranscripts: string[] = [];

  const post = (url: string, payload: Record<string, unknown>, caller: Caller = "gateway") =>
    app.inject({ method: "POST", url, headers: bearer(caller), payload });
  const exportOf = async (userId: string, caller: Caller = "admin", requestedBy = "household-admin") => {
    const response = await post("/admin/export", { userId, requestedBy }, caller);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<PersonExport & { format: string }>();
  };
  const remember = async (principal: typeof ana, statement: string, scope = "user") => {
    const response = await post("/remember", { principal, statement, scope, propose: false });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ id: string }>().id;
  };
  const archiveTranscript = async (principal: typeof ana, content: string) => {
    const at = "2026-05-01T09:00:00.000Z";
    const response = await post("/archive/transcripts", {
      principal,
      sessionId: `session-${randomBytes(4).toString("hex")}`,
      channel: "telegram",
      endReason: "reset",
      endedAt: at,
      messages: [
        { role: "user", content, at },
        { role: "assistant", content: "Noted.", at },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    return response.json<{ hash: string }>().hash;
  };

  beforeAll(async () => {
    const testbed = inject("testbed");
    if (!testbed.opensearch)
      throw new Error("this suite needs the opensearch test-bed service (REMRAM_TESTBED)");
    cortex = await startFullCortex({
      opensearchUrl: testbed.opensearch.url,
      archiveTieringIntervalMinutes: 0,
    });
    app = cortex.app;
    const black = await remember(ana, "Ana drinks her coffee black");
    // She corrects it later: the old object is invalidated, never overwritten, and both are hers.
    const anaScope = { kind: "user", ownerIds: ["ana"] };
    const corrected = await post("/reflect", {
      principal: ana,
      sessionId: "s2",
      corrections: [
        {
          targetId: black,
          statement: "Ana drinks her coffee black",
          scope: anaScope,
          sourceTurnIds: ["t2"],
          replacement: {
            type: "preference",
            statement: "Ana takes oat milk in her coffee",
            scope: anaScope,
            sourceTurnIds: ["t2"],
          },
        },
      ],
    });
    expect(corrected.json<{ invalidated: string[] }>().invalidated).toEqual([black]);
    await remember(ana, "The recycling goes out on Thursdays", "household");
    await remember(bo, "Bo keeps the spare car key under the doormat");
    anaTranscripts.push(
      await archiveTranscript(ana, "Let us plan the allotment: rhubarb beside the compost."),
    );
    await archiveTranscript(bo, "Book the ferry to Bergen for the first of June.");
    const { client } = app.cortex.store;
    await client.indices.refresh({ index: "_all" });
  });

  afterAll(async () => cortex?.stop());

  it("holds the person's own knowledge and transcripts, not the household's and nobody else's", async () => {
    const exported = await exportOf("ana");
    expect(exported.format).toBe("json");
    expect(exported.userId).toBe("ana");
    // A household item belongs to the household (it survives a member's erasure too), not to whoever said it.
    expect(
      exported.knowledge.map((object) => [object.statement, object.status, object.owner.userId]),
    ).toEqual([
      ["Ana drinks her coffee black", "invalidated", "ana"],
      ["Ana takes oat milk in her coffee", "active", "ana"],
    ]);
    expect(exported.transcripts.map((transcript) => transcript.hash)).toEqual(anaTranscripts);
    expect(JSON.stringify(exported)).not.toMatch(/doormat|ferry|recycling|embedding/);
  });

  it("renders the same as a Markdown document on request", async () => {
    const response = await post(
      "/admin/export",
      { userId: "ana", requestedBy: "ana", format: "markdown" },
      "app",
    );
    expect(response.statusCode, response.body).toBe(200);
    const { markdown, counts } = response.json<{ markdown: string; counts: Record<string, number> }>();
    expect(counts).toEqual({ knowledge: 2, transcripts: 1 });
    expect(markdown).toContain("# What Remram holds about ana");
    const [current, past] = markdown.split("## Corrected or faded");
    expect(current).toContain("Ana takes oat milk in her coffee");
    expect(past).toContain("Ana drinks her coffee black");
    expect(markdown).toContain(anaTranscripts[0]);
    expect(markdown).not.toContain("doormat");
  });

  it("lets the app export only the person it acts for", async () => {
    const response = await post("/admin/export", { userId: "bo", requestedBy: "ana" }, "app");
    expect(response.statusCode).toBe(403);
    expect(response.json<{ message: string }>().message).toContain("only the requesting person's own data");
    expect(response.body).not.toContain("doormat");
    expect((await exportOf("ana", "app", "ana")).knowledge).toHaveLength(2);
  });

  it("answers an empty export for a person Cortex knows nothing about", async () => {
    const exported = await exportOf("nobody");
    expect(exported.knowledge).toEqual([]);
    expect(exported.transcripts).toEqual([]);
  });

  it("refuses a malformed request with the field it got wrong", async () => {
    const response = await post(
      "/admin/export",
      { userId: "ana", requestedBy: "ana", format: "pdf" },
      "admin",
    );
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("format");
  });
});
