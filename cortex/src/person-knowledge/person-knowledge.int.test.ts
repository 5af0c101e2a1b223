/**
 * "My memory" (POST /person/knowledge, /correct, /forget) on a real Cortex over the test bed's OpenSearch, with the
 * callers' real credentials: two people in one household see their own knowledge and the household's, search and
 * page through it, correct it (retrieval then answers the correction) and forget it for good.
 */
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type {
  ConsistencyReport,
  ExplicitSaveResponse,
  IngestResponse,
  PersonKnowledgeCorrectResponse,
  PersonKnowledgeForgetResponse,
  PersonKnowledgeRequestInput,
  PersonKnowledgeResponse,
  Proposal,
} from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type FullCortex, retrieveFor, startFullCortex } from "../../test/helpers.js";
import { forgottenIndex } from "../knowledge/forgotten.js";
import { tombstoneIndex } from "../knowledge/tombstones.js";

const household = "home";
const principal = (userId: string) => ({ userId, householdId: household, agentId: "main" });

const fact = (key: string, userId: string | undefined, statement: string, privacy = "household") => ({
  kind: "knowledge",
  provenanceKey: key,
  scope: userId === undefined ? "household" : "user",
  owner: userId === undefined ? { householdId: household } : { userId },
  privacy,
  statement,
  type: "fact",
  source: "user",
  confidence: 0.8,
});

const events = [
  fact("a-colour", "alice", "Alice's favourite colour is green"),
  fact("a-bike", "alice", "Alice keeps her bicycle in the garage"),
  fact("a-tea", "alice", "Alice drinks rooibos tea in the evening"),
  fact("a-phone", "alice", "Alice's dentist appointment is on Fridays", "private"),
  fact("a-forget", "alice", "Alice is planning a surprise party for Bob"),
  fact("b-bike", "bob", "Bob keeps his bicycle at the office"),
  fact("b-music", "bob", "Bob listens to jazz while cooking"),
  fact("h-boat", undefined, "The boat is kept in the north shed"),
  fact("h-wifi", undefined, "The guest network is called Harbour"),
  fact("h-private", undefined, "The household's private note about the safe", "private"),
];

describe("My memory (POST /person/knowledge, /correct, /forget) on a real Cortex", () => {
  let cortex: FullCortex;
  /** Ingested ids by provenance key. */
  const ids = new Map<string, string>();
  const idOf = (key: string) => ids.get(key) as string;

  beforeAll(async () => {
    cortex = await startFullCortex({
      opensearchUrl: testbedEndpoints("opensearch").url,
      householdId: household,
    });
    const ingested = await ingest(events);
    expect(ingested.statusCode, ingested.body).toBe(200);
    ingested.json<IngestResponse>().items.forEach((item, i) => {
      ids.set(events[i]?.provenanceKey as string, item.ids[0] as string);
    });
  });
  afterAll(async () => {
    if (cortex === undefined) return;
    const { client } = cortex.app.cortex.store;
    for (const index of [forgottenIndex(cortex.app.cortex.store), tombstoneIndex(cortex.app.cortex.store)])
      await client.transport.request({ method: "DELETE", path: `/${index}` }, { ignore: [404] });
    await cortex.stop();
  });

  const ingest = (batch: unknown[]) =>
    cortex.app.inject({
      method: "POST",
      url: "/ingest",
      headers: bearer("gateway"),
      payload: { events: batch },
    });
  const post = (url: string, payload: object, caller: "app" | "admin" = "app") =>
    cortex.app.inject({ method: "POST", url, headers: bearer(caller), payload });
  const list = async (body: PersonKnowledgeRequestInput, caller: "app" | "admin" = "app") => {
    const response = await post("/person/knowledge", body, caller);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<PersonKnowledgeResponse>();
  };
  const listAll = async (userId: string, extra: Partial<PersonKnowledgeRequestInput> = {}) =>
    list({ userId, requestedBy: userId, limit: 200, ...extra });
  const correct = (userId: string, id: string, statement: string) =>
    post("/person/knowledge/correct", { userId, requestedBy: userId, id, statement, reason: "it changed" });
  const forget = (userId: string, forgetIds: string[], extra: object = {}) =>
    post("/person/knowledge/forget", {
      userId,
      requestedBy: userId,
      ids: forgetIds,
      reason: "not yours to keep",
      ...extra,
    });
  const retrieved = async (userId: string, requestText: string) =>
    (
      await retrieveFor(cortex.app, {
        principal: principal(userId),
        requestText,
        tokenBudget: 800,
        modelLocation: "local",
      })
    ).facts.map((f) => f.statement);

  it("shows each person their own knowledge and the household's, never the other's", async () => {
    const alice = await listAll("alice");
    const own = ["a-colour", "a-bike", "a-tea", "a-phone", "a-forget"].map(idOf);
    const home = ["h-boat", "h-wifi"].map(idOf);
    expect(alice.items.map((i) => i.object.id).sort()).toEqual([...own, ...home].sort());
    expect(alice.total).toBe(7);
    expect(alice.nextCursor).toBeNull();
    for (const item of alice.items) expect(item.mine).toBe(own.includes(item.object.id));
    const bob = await listAll("bob");
    expect(bob.items.map((i) => i.object.id).sort()).toEqual(
      [idOf("b-bike"), idOf("b-music"), ...home].sort(),
    );
    const onlyHousehold = await listAll("bob", { scopes: ["household"] });
    expect(onlyHousehold.items.map((i) => i.object.id).sort()).toEqual([...home].sort());
  });

  it("finds by words, best match first", async () => {
    const found = await listAll("alice", { query: "bicycle garage" });
    expect(found.items[0]?.object.statement).toBe("Alice keeps her bicycle in the garage");
    // Bob's bicycle is not Alice's to see.
    expect(found.items.map((i) => i.object.id)).not.toContain(idOf("b-bike"));
    expect(found.total).toBe(found.items.length);
  });

  it("pages through everything, newest first and by words, without gaps or repeats", async () => {
    for (const filters of [{}, { query: "Alice boat guest" }]) {
      const seen: string[] = [];
      let cursor: string | undefined;
      let pages = 0;
      do {
        const page = await list({
          userId: "alice",
          requestedBy: "alice",
          limit: 2,
          ...filters,
          ...(cursor && { cursor }),
        });
        expect(page.items.length).toBeLessThanOrEqual(2);
        seen.push(...page.items.map((i) => i.object.id));
        cursor = page.nextCursor ?? undefined;
        pages += 1;
      } while (cursor !== undefined && pages < 10);
      const whole = await listAll("alice", filters);
      expect(seen).toEqual(whole.items.map((i) => i.object.id));
      expect(new Set(seen).size).toBe(seen.length);
    }
    const first = await list({ userId: "alice", requestedBy: "alice", limit: 2 });
    const foreign = await post("/person/knowledge", {
      userId: "bob",
      requestedBy: "bob",
      cursor: first.nextCursor,
    });
    expect(foreign.statusCode, foreign.body).toBe(400);
  });

  it("lists another person's knowledge for the app only with asAdmin, for the admin caller always", async () => {
    const refused = await post("/person/knowledge", { userId: "bob", requestedBy: "alice" });
    expect(refused.statusCode, refused.body).toBe(403);
    const asAdmin = await list({ userId: "bob", requestedBy: "alice", asAdmin: true });
    expect(asAdmin.items.map((i) => i.object.id)).toContain(idOf("b-bike"));
    const admin = await list({ userId: "bob", requestedBy: "household-admin" }, "admin");
    expect(admin.total).toBe(asAdmin.total);
  });

  it("corrects: the old object invalidated and kept, a new one active, retrieval answers the correction", async () => {
    const old = idOf("a-colour");
    const response = await correct("alice", old, "Alice's favourite colour is blue");
    expect(response.statusCode, response.body).toBe(200);
    const { invalidated, created } = response.json<PersonKnowledgeCorrectResponse>();
    expect(invalidated).toBe(old);
    expect(created).toMatchObject({
      statement: "Alice's favourite colour is blue",
      status: "active",
      scope: "user",
      owner: { userId: "alice" },
      userDirective: true,
      provenance: { source: "user" },
      links: [{ rel: "supersedes", targetId: old }],
    });
    const listed = await listAll("alice", { query: "favourite colour" });
    const before = listed.items.find((i) => i.object.id === old);
    expect(before?.object).toMatchObject({
      status: "invalidated",
      links: [{ rel: "supersededBy", targetId: created.id }],
    });
    expect(before?.object.validity.invalidAt).not.toBeNull();
    expect(before?.contradictedBy).toEqual([
      { id: created.id, statement: "Alice's favourite colour is blue" },
    ]);
    expect(listed.items.find((i) => i.object.id === created.id)?.mine).toBe(true);
    const facts = await retrieved("alice", "what is Alice's favourite colour");
    expect(facts).toContain("Alice's favourite colour is blue");
    expect(facts).not.toContain("Alice's favourite colour is green");

    // The same correction again: the same answer, nothing new.
    const retried = await correct("alice", old, "Alice's favourite colour is blue");
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json<PersonKnowledgeCorrectResponse>().created.id).toBe(created.id);
    expect((await listAll("alice", { query: "favourite colour" })).total).toBe(2);
    // Another correction of the invalidated one: 409.
    expect((await correct("alice", old, "Alice's favourite colour is red")).statusCode).toBe(409);
  });

  it("corrects the household's knowledge for any member, never another person's", async () => {
    const boat = await correct("bob", idOf("h-boat"), "The boat is kept in the south shed");
    expect(boat.statusCode, boat.body).toBe(200);
    expect(boat.json<PersonKnowledgeCorrectResponse>().created).toMatchObject({
      scope: "household",
      owner: { householdId: household },
    });
    // Unknown and someone else's look the same.
    expect((await correct("alice", idOf("b-music"), "Bob listens to opera")).statusCode).toBe(404);
    expect((await correct("alice", "ko_does_not_exist", "anything")).statusCode).toBe(404);
    expect((await correct("alice", idOf("h-private"), "anything")).statusCode).toBe(404);
    const forOther = await post("/person/knowledge/correct", {
      userId: "bob",
      requestedBy: "alice",
      id: idOf("b-music"),
      statement: "Bob listens to opera",
    });
    expect(forOther.statusCode).toBe(403);
  });

  it("refuses to forget someone else's id, all or nothing", async () => {
    const mixed = await forget("alice", [idOf("a-tea"), idOf("b-music")]);
    expect(mixed.statusCode, mixed.body).toBe(404);
    expect(mixed.json<{ message: string }>().message).toContain(
      "1 of the 2 ids are not yours or do not exist",
    );
    expect(mixed.body).not.toContain(idOf("b-music"));
    expect((await listAll("alice")).items.map((i) => i.object.id)).toContain(idOf("a-tea"));
    expect((await listAll("bob")).items.map((i) => i.object.id)).toContain(idOf("b-music"));
    // Household knowledge goes only for an administrator; the app for another person only with asAdmin.
    expect((await forget("alice", [idOf("h-wifi")])).statusCode).toBe(403);
    expect((await forget("bob", [idOf("b-music")], { requestedBy: "alice" })).statusCode).toBe(403);
  });

  it("forgets for good: gone from the listing and retrieval, and neither ingest nor reflection brings it back", async () => {
    const id = idOf("a-forget");
    expect(await retrieved("alice", "surprise party for Bob")).toContain(
      "Alice is planning a surprise party for Bob",
    );
    const response = await forget("alice", [id]);
    expect(response.statusCode, response.body).toBe(200);
    const outcome = response.json<PersonKnowledgeForgetResponse>();
    expect(outcome).toMatchObject({ forgotten: 1, alreadyForgotten: 0, counts: { knowledgeDeleted: 1 } });
    expect((await listAll("alice")).items.map((i) => i.object.id)).not.toContain(id);
    expect(await retrieved("alice", "surprise party for Bob")).not.toContain(
      "Alice is planning a surprise party for Bob",
    );

    // The same capture again, and the same words under another key: refused for good.
    const replay = await ingest([events.find((e) => e.provenanceKey === "a-forget")]);
    expect(replay.statusCode, replay.body).toBe(410);
    const reworded = await ingest([
      fact("a-forget-2", "alice", "alice is planning a surprise party for Bob."),
    ]);
    expect(reworded.statusCode, reworded.body).toBe(410);
    const reflected = await cortex.app.inject({
      method: "POST",
      url: "/reflect",
      headers: bearer("gateway"),
      payload: {
        principal: principal("alice"),
        sessionId: "s-forget",
        items: [
          {
            type: "fact",
            statement: "Alice is planning a surprise party for Bob",
            scope: { kind: "user", ownerIds: ["alice"] },
            sourceTurnIds: ["t1"],
          },
        ],
      },
    });
    expect(reflected.statusCode, reflected.body).toBe(200);
    expect(reflected.json<{ created: string[] }>().created).toEqual([]);
    expect((await listAll("alice", { query: "surprise party" })).total).toBe(0);

    // A retried forget is done already.
    const retried = await forget("alice", [id]);
    expect(retried.statusCode, retried.body).toBe(200);
    expect(retried.json<PersonKnowledgeForgetResponse>()).toMatchObject({
      forgotten: 0,
      alreadyForgotten: 1,
    });
  });

  it("forgets a promoted object from the workspace repository's whole history too", async () => {
    const statement = "Alice keeps the locker key in the blue notebook";
    const saved = await cortex.app.inject({
      method: "POST",
      url: "/remember",
      headers: bearer("gateway"),
      payload: {
        principal: principal("alice"),
        sessionId: "s-save",
        turnId: "t-save",
        statement,
        type: "fact",
      },
    });
    expect(saved.statusCode, saved.body).toBe(200);
    const { id, proposal } = saved.json<ExplicitSaveResponse>();
    if (proposal.status !== "pending") throw new Error(`proposal ${proposal.status}`);
    const pending = await cortex.app.inject({
      method: "GET",
      url: "/proposals?status=pending",
      headers: bearer("operator"),
    });
    const page = pending.json<{ proposals: Proposal[] }>().proposals.find((p) => p.id === proposal.id);
    const promoted = await cortex.app.inject({
      method: "POST",
      url: "/promote",
      headers: bearer("operator"),
      payload: { proposalId: proposal.id, approvedBy: "alice", expectedDigest: page?.proposedDigest },
    });
    expect(promoted.statusCode, promoted.body).toBe(200);
    const history = () =>
      execFileSync("git", ["-C", cortex.workspace, "log", "--all", "-p"], { encoding: "utf8" });
    expect(history()).toContain(statement);

    const response = await forget("alice", [id]);
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<PersonKnowledgeForgetResponse>().counts.gitCommitsRewritten).toBeGreaterThan(0);
    expect(history()).not.toContain(statement);
    expect(
      await readFile(join(cortex.workspace, proposal.artifactPath), "utf8").catch(() => ""),
    ).not.toContain(statement);
    // Every store still agrees with the others: no vector, proposal or commit left naming what went.
    const check = await cortex.app.inject({
      method: "POST",
      url: "/admin/check",
      headers: bearer("operator"),
    });
    expect(check.statusCode, check.body).toBe(200);
    expect(check.json<ConsistencyReport>()).toMatchObject({ consistent: true, byKind: {} });
  });

  it("lets an administrator forget household knowledge; the other person's listing loses it too", async () => {
    const response = await forget("alice", [idOf("h-wifi")], { asAdmin: true });
    expect(response.statusCode, response.body).toBe(200);
    expect((await listAll("bob")).items.map((i) => i.object.id)).not.toContain(idOf("h-wifi"));
  });
});
