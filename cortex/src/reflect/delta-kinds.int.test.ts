/**
 * Every kind of reflection delta part through the real /reflect on the real OpenSearch: links stored on both ends,
 * reinforce / weaken / contradict moving confidence by the confidence rules, a household item from a household
 * session, and the writes a session may not make (shared scope, other people's ids, a household it is not in).
 */
import type { KnowledgeObject, ReflectResponse } from "@remram/contract";
import { testbedEndpoints } from "@remram/test-harness/vitest";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { bearer, type FullCortex, startFullCortex } from "../../test/helpers.js";
import { applyConfidenceEvent, defaultConfidenceConstants } from "../core/confidence.js";
import { loadObjects } from "../knowledge/repository.js";

const { url: opensearchUrl } = testbedEndpoints("opensearch");
const gateway = bearer("gateway");
const alice = { userId: "alice", householdId: "h1", agentId: "main" };
const aliceAlone = { userId: "alice", agentId: "main" };
const bob = { userId: "bob", householdId: "h2", agentId: "main" };
const aliceScope = { kind: "user", ownerIds: ["alice"] };
const household = { kind: "household", ownerIds: ["h1"] };

const item = (type: string, statement: string, scope: unknown = aliceScope) => ({
  type,
  statement,
  scope,
  sourceTurnIds: ["t1"],
});

describe("reflection delta kinds on a real Cortex and OpenSearch", () => {
  let cortex: FullCortex;
  let app: FastifyInstance;
  const ids: Record<string, string> = {};
  const id = (name: string): string => {
    const found = ids[name];
    if (found === undefined) throw new Error(`no ${name} seeded`);
    return found;
  };

  const reflect = (principal: unknown, delta: Record<string, unknown>) =>
    app.inject({ method: "POST", url: "/reflect", headers: gateway, payload: { principal, ...delta } });
  const reflected = async (principal: unknown, delta: Record<string, unknown>) => {
    const response = await reflect(principal, delta);
    expect(response.statusCode, response.body).toBe(200);
    return response.json<ReflectResponse>();
  };
  const objects = async (...wanted: string[]): Promise<KnowledgeObject[]> => {
    const found = await loadObjects(app.cortex.store, wanted);
    return wanted.map((id) => {
      const object = found.get(id);
      if (object === undefined) throw new Error(`no object ${id}`);
      return object;
    });
  };
  const storedCount = async (): Promise<number> => {
    await app.cortex.store.client.indices.refresh({ index: app.cortex.store.indices.knowledge });
    const { body } = await app.cortex.store.client.count({ index: app.cortex.store.indices.knowledge });
    return body.count;
  };

  beforeAll(async () => {
    cortex = await startFullCortex({ opensearchUrl });
    app = cortex.app;
    const seeded = await reflected(alice, {
      sessionId: "s1",
      items: [
        item("preference", "Alice takes tea in the morning"),
        item("fact", "Alice's bike is red"),
        item("preference", "Alice prefers window seats on trains"),
        item("constraint", "Bins go out on Tuesdays", household),
      ],
    });
    for (const [index, name] of ["tea", "bike", "seats", "bins"].entries()) {
      const created = seeded.created[index];
      if (created !== undefined) ids[name] = created;
    }
    const bobs = await reflected(bob, {
      sessionId: "b1",
      items: [item("fact", "Bob sails", { kind: "user", ownerIds: ["bob"] })],
    });
    if (bobs.created[0] !== undefined) ids.bob = bobs.created[0];
    expect(Object.keys(ids).sort()).toEqual(["bike", "bins", "bob", "seats", "tea"]);
  });
  afterAll(async () => cortex?.stop());

  it("applies reinforce, weaken and contradict to the named objects through the confidence rules", async () => {
    const before = new Map((await objects(id("tea"), id("bike"), id("seats"))).map((o) => [o.id, o]));
    const outcome = await reflected(alice, {
      sessionId: "s2",
      confidenceAdjustments: [
        { targetId: id("tea"), effect: "reinforce", reason: "confirmed", sourceTurnIds: ["t2"] },
        { targetId: id("bike"), effect: "weaken", reason: "unsure", sourceTurnIds: ["t2"] },
        { targetId: id("seats"), effect: "contradict", reason: "said wrong", sourceTurnIds: ["t2"] },
      ],
    });
    expect([...outcome.adjusted].sort()).toEqual([id("tea"), id("bike"), id("seats")].sort());
    const [tea, bike, seats] = await objects(id("tea"), id("bike"), id("seats"));
    const was = (id: string) => before.get(id)?.confidence ?? Number.NaN;
    expect(tea?.confidence).toBeCloseTo(
      applyConfidenceEvent(was(id("tea")), { kind: "reinforcement", newSession: true }),
      10,
    );
    expect(tea).toMatchObject({ reinforcementCount: 2, sessionIds: ["s1", "s2"] });
    expect(bike?.confidence).toBeCloseTo(
      was(id("bike")) - defaultConfidenceConstants.maxExplicitAdjustment,
      10,
    );
    expect(seats?.confidence).toBeCloseTo(
      was(id("seats")) * defaultConfidenceConstants.contradictionRetained,
      10,
    );
    // Contradicted by a conversation, not corrected: still valid until dream or a correction ends it.
    expect(seats).toMatchObject({ status: "active", validity: { invalidAt: null } });
  });

  it("stores a household item from a household session, linked both ways to the object it refines", async () => {
    const outcome = await reflected(alice, {
      sessionId: "s3",
      items: [item("constraint", "Glass goes out on Tuesdays too", household)],
      links: [
        { from: { item: 0 }, relation: "refines", to: { id: id("bins") }, sourceTurnIds: ["t3"] },
        { from: { id: id("tea") }, relation: "supports", to: { id: id("seats") }, sourceTurnIds: ["t3"] },
        // Across scopes (household item, user object): dropped, never stored on either end.
        { from: { item: 0 }, relation: "related", to: { id: id("tea") }, sourceTurnIds: ["t3"] },
      ],
    });
    expect(outcome).toMatchObject({ linksAdded: 4, linksDropped: 1 });
    const glassId = outcome.created[0] ?? "";
    const [glass, bins, tea, seats] = await objects(glassId, id("bins"), id("tea"), id("seats"));
    expect(glass).toMatchObject({ scope: "household", owner: { householdId: "h1" } });
    expect(glass?.links).toEqual([{ rel: "refines", targetId: id("bins") }]);
    expect(bins?.links).toEqual([{ rel: "refinedBy", targetId: glassId }]);
    expect(tea?.links).toEqual([{ rel: "evidenceFor", targetId: id("seats") }]);
    expect(seats?.links).toEqual([{ rel: "evidence", targetId: id("tea") }]);
  });

  it("answers a retried delta from its receipt: nothing moves twice", async () => {
    const delta = {
      sessionId: "s4",
      confidenceAdjustments: [
        { targetId: id("bike"), effect: "weaken", reason: "again", sourceTurnIds: ["t4"] },
      ],
    };
    await reflected(alice, delta);
    const [once] = await objects(id("bike"));
    const again = await reflected(alice, delta);
    expect(again.replayed).toBe(true);
    const [twice] = await objects(id("bike"));
    expect(twice?.confidence).toBe(once?.confidence);
  });

  it("refuses shared scope from a session, and writes nothing of the delta", async () => {
    const before = await storedCount();
    const response = await reflect(alice, {
      sessionId: "s5",
      items: [
        item("fact", "Alice found a new cafe"),
        item("fact", "Everyone may use the sauna", { kind: "shared", ownerIds: [] }),
      ],
    });
    expect(response.statusCode).toBe(403);
    expect(response.json<{ violations: { path: string }[] }>().violations.map((v) => v.path)).toEqual([
      "items.1.scope",
    ]);
    expect(await storedCount()).toBe(before);
  });

  it("refuses a link to someone else's object as it refuses a missing id, leaving both objects untouched", async () => {
    const [bobBefore] = await objects(id("bob"));
    const answers = [];
    for (const target of [id("bob"), "k-does-not-exist"]) {
      const response = await reflect(alice, {
        sessionId: "s6",
        links: [{ from: { id: id("tea") }, relation: "related", to: { id: target }, sourceTurnIds: ["t6"] }],
      });
      expect(response.statusCode).toBe(403);
      answers.push(
        response.json<{ violations: { reason: string }[] }>().violations[0]?.reason.replace(target, "X"),
      );
    }
    expect(answers[0]).toBe(answers[1]);
    const [bobAfter, tea] = await objects(id("bob"), id("tea"));
    expect(bobAfter).toEqual(bobBefore);
    expect(tea?.links.map((l) => l.targetId)).not.toContain(id("bob"));
  });

  it("refuses a household item, or an adjustment of a household object, from a session without a household", async () => {
    const item403 = await reflect(aliceAlone, {
      sessionId: "s7",
      items: [item("fact", "The boiler is new", household)],
    });
    expect(item403.statusCode).toBe(403);
    const adjust403 = await reflect(aliceAlone, {
      sessionId: "s7",
      confidenceAdjustments: [
        { targetId: id("bins"), effect: "reinforce", reason: "r", sourceTurnIds: ["t7"] },
      ],
    });
    expect(adjust403.statusCode).toBe(403);
  });

  it("refuses, as bad input, a link to an item the delta does not have", async () => {
    const response = await reflect(alice, {
      sessionId: "s8",
      links: [{ from: { item: 0 }, relation: "related", to: { id: id("tea") }, sourceTurnIds: ["t8"] }],
    });
    expect(response.statusCode).toBe(400);
    expect(response.body).toContain("no items.0 in this delta");
  });
});
