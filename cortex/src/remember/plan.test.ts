import { type ExplicitSaveRequestInput, explicitSaveRequest, knowledgeObject } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { artifactSourceIds } from "../core/proposal.js";
import { toMaturing } from "../knowledge/mapping.js";
import { draftPageProposal, explicitSaveConfidence, planNewSave, planRepeatSave, saveScope } from "./plan.js";

const now = "2026-03-01T12:00:00.000Z";
const later = "2026-03-05T12:00:00.000Z";
const alice = { userId: "alice", householdId: "h1", agentId: "main" };
const defaults = { privacy: "private" as const, now };

function request(input: Partial<ExplicitSaveRequestInput> = {}) {
  return explicitSaveRequest.parse({
    principal: alice,
    statement: "I take my coffee black",
    type: "preference",
    sessionId: "s1",
    turnId: "t1",
    ...input,
  });
}

function saved(input: Partial<ExplicitSaveRequestInput> = {}) {
  const parsed = request(input);
  const scope = saveScope(parsed, ["user", "household"]);
  if (!scope.ok) throw new Error(scope.message);
  return planNewSave(parsed, scope.scope, defaults);
}

describe("saveScope", () => {
  it("writes the principal's own scope, or the household's when asked and the session has one", () => {
    expect(saveScope(request(), ["user", "household"])).toEqual({
      ok: true,
      scope: { kind: "user", ownerIds: ["alice"] },
    });
    expect(saveScope(request({ scope: "household" }), ["user", "household"])).toEqual({
      ok: true,
      scope: { kind: "household", ownerIds: ["h1"] },
    });
  });

  it("refuses a household save without a household (400) and a scope the policy forbids (403)", () => {
    const noHousehold = request({ scope: "household", principal: { userId: "bob", agentId: "main" } });
    expect(saveScope(noHousehold, ["user", "household"])).toMatchObject({ ok: false, status: 400 });
    expect(saveScope(request({ scope: "household" }), ["user"])).toMatchObject({ ok: false, status: 403 });
  });
});

describe("planNewSave", () => {
  it("stores a user directive with the user's provenance, the save's confidence and a valid object", () => {
    const { object } = saved();
    expect(object).toMatchObject({
      statement: "I take my coffee black",
      type: "preference",
      scope: "user",
      owner: { userId: "alice" },
      privacy: "private",
      confidence: explicitSaveConfidence,
      userDirective: true,
      status: "active",
      sessionIds: ["s1"],
      provenance: { source: "user", agentId: "main", sourceTurnIds: ["t1"], observedAt: now },
    });
    expect(() => knowledgeObject.parse(object)).not.toThrow();
  });

  it("is one object for the same save, whatever the case, spacing, final stop, turn or session", () => {
    const first = saved().object;
    const again = saved({ statement: "  i take my   COFFEE black. ", turnId: "t7", sessionId: "s9" }).object;
    expect(again.id).toBe(first.id);
    expect(saved({ type: "fact" }).object.id).not.toBe(first.id);
    expect(saved({ statement: "I take my coffee with milk" }).object.id).not.toBe(first.id);
  });

  it("keeps different owners' identical saves apart", () => {
    const bob = saved({ principal: { userId: "bob", householdId: "h1", agentId: "main" } }).object;
    expect(bob.id).not.toBe(saved().object.id);
    expect(saved({ scope: "household" }).object.id).not.toBe(saved().object.id);
  });

  it("redacts credentials; keeps a user's own contact details as private, replaces them in household scope", () => {
    const secret = saved({ statement: "the wifi password is password=hunter2hunter2" });
    expect(secret.object.statement).not.toContain("hunter2hunter2");
    expect(secret.redactions).toBeGreaterThan(0);
    const own = saved({ statement: "my dentist is at +49 170 1234567", type: "fact" });
    expect(own.object.statement).toContain("+49 170 1234567");
    expect(own.object.privacy).toBe("private");
    const shared = saved({ statement: "the plumber is at +49 170 1234567", scope: "household" });
    expect(shared.object.statement).not.toContain("1234567");
    expect(shared.object).toMatchObject({
      scope: "household",
      owner: { householdId: "h1" },
      privacy: "household",
    });
  });
});

describe("planRepeatSave", () => {
  it("changes nothing for the same turn again (a retried delivery)", () => {
    const { object } = saved();
    expect(planRepeatSave(object, request(), later)).toEqual({ status: "replayed" });
  });

  it("reinforces from another turn, more from another session, never below the save's confidence", () => {
    const { object } = saved();
    const sameSession = planRepeatSave(object, request({ turnId: "t2" }), later);
    const otherSession = planRepeatSave(object, request({ turnId: "t3", sessionId: "s2" }), later);
    if (sameSession.status === "replayed" || otherSession.status === "replayed") throw new Error("replayed");
    expect(sameSession.status).toBe("reinforced");
    expect(sameSession.object.reinforcementCount).toBe(2);
    expect(sameSession.object.confidence).toBeGreaterThan(explicitSaveConfidence);
    expect(otherSession.object.confidence).toBeGreaterThan(sameSession.object.confidence);
    expect(otherSession.object.sessionIds).toEqual(["s1", "s2"]);
    const decayed = planRepeatSave({ ...object, confidence: 0.3 }, request({ turnId: "t4" }), later);
    if (decayed.status === "replayed") throw new Error("replayed");
    expect(decayed.object.confidence).toBe(explicitSaveConfidence);
  });

  it("revives what was invalidated or demoted since: the person's word now", () => {
    const { object } = saved();
    const invalidated = {
      ...object,
      status: "invalidated" as const,
      confidence: 0.4,
      validity: { validFrom: now, invalidAt: now },
    };
    const revived = planRepeatSave(invalidated, request(), later);
    expect(revived.status).toBe("revived");
    if (revived.status === "replayed") throw new Error("replayed");
    expect(revived.object).toMatchObject({
      status: "active",
      validity: { invalidAt: null },
      confidence: explicitSaveConfidence,
    });
    expect(planRepeatSave({ ...object, status: "demoted" }, request({ turnId: "t5" }), later).status).toBe(
      "revived",
    );
  });
});

describe("draftPageProposal", () => {
  const artifacts = "artifacts";

  it("proposes the scope's page for its type, listing every qualifying object and the save", () => {
    const coffee = toMaturing(saved().object);
    const tea = toMaturing(saved({ statement: "I like green tea", turnId: "t2" }).object);
    const weak = {
      ...toMaturing(saved({ statement: "I might like jazz" }).object),
      userDirective: undefined,
      confidence: 0.5,
    };
    const { path, draft } = draftPageProposal([tea, weak, coffee], coffee, undefined, artifacts);
    expect(path).toBe("artifacts/users/alice/preferences.md");
    expect(draft?.artifactPath).toBe(path);
    expect(draft?.sourceKnowledgeIds).toEqual([coffee.id, tea.id].sort());
    expect(draft?.baseDigest).toBeUndefined();
    expect(draft?.content).toContain("I take my coffee black");
  });

  it("proposes nothing when the current page lists exactly what qualifies; the same input gives the same id", () => {
    const coffee = toMaturing(saved().object);
    const first = draftPageProposal([], coffee, undefined, artifacts).draft;
    expect(draftPageProposal([], coffee, undefined, artifacts).draft?.id).toBe(first?.id);
    const promoted = first?.content ?? "";
    expect(artifactSourceIds(promoted)).toEqual([coffee.id]);
    expect(draftPageProposal([], coffee, promoted, artifacts).draft).toBeUndefined();
  });

  it("leaves other scopes and types out of the page", () => {
    const coffee = toMaturing(saved().object);
    const fact = toMaturing(saved({ statement: "My car is blue", type: "fact" }).object);
    const household = toMaturing(saved({ statement: "I like green tea", scope: "household" }).object);
    const { draft } = draftPageProposal([fact, household], coffee, undefined, artifacts);
    expect(draft?.sourceKnowledgeIds).toEqual([coffee.id]);
  });
});
