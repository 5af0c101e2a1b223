import { reflectionDeltaSchema } from "@remram/contract";
import { describe, expect, it } from "vitest";
import type { ScopeKind } from "../core/knowledge.js";
import { knowledgeObject } from "../testing/fixtures.js";
import { canWriteScope, findScopeViolations } from "./scope.js";

const principal = { userId: "alice", householdId: "h1", agentId: "main" };
const all: ScopeKind[] = ["user", "household", "shared"];

describe("scope check", () => {
  it("lets a principal write their own user scope and their household", () => {
    expect(canWriteScope(principal, { kind: "user", ownerIds: ["alice"] }, all)).toBe(true);
    expect(canWriteScope(principal, { kind: "household", ownerIds: ["h1"] }, all)).toBe(true);
  });

  it("rejects another user's scope, another household and a household without membership", () => {
    expect(canWriteScope(principal, { kind: "user", ownerIds: ["bob"] }, all)).toBe(false);
    expect(canWriteScope(principal, { kind: "user", ownerIds: ["alice", "bob"] }, all)).toBe(false);
    expect(canWriteScope(principal, { kind: "household", ownerIds: ["h2"] }, all)).toBe(false);
    expect(
      canWriteScope({ userId: "alice", agentId: "main" }, { kind: "household", ownerIds: ["h1"] }, all),
    ).toBe(false);
  });

  it("refuses every shared scope, even one naming the principal: only dream and approved promotions write it", () => {
    expect(canWriteScope(principal, { kind: "shared", ownerIds: ["alice", "bob"] }, all)).toBe(false);
    expect(canWriteScope(principal, { kind: "shared", ownerIds: ["bob", "carol"] }, all)).toBe(false);
    expect(canWriteScope(principal, { kind: "shared", ownerIds: [] }, all)).toBe(false);
    expect(canWriteScope(principal, { kind: "shared", ownerIds: [] }, ["user", "household"])).toBe(false);
    expect(canWriteScope(principal, { kind: "user", ownerIds: [] }, all)).toBe(false);
  });

  it("rejects a scope kind the dimension policy does not allow", () => {
    expect(canWriteScope(principal, { kind: "household", ownerIds: ["h1"] }, ["user"])).toBe(false);
  });

  it("names every offending field of a delta, including targets in other scopes or missing", () => {
    const delta = reflectionDeltaSchema.parse({
      sessionId: "s1",
      items: [
        {
          type: "fact",
          statement: "ok",
          scope: { kind: "user", ownerIds: ["alice"] },
          sourceTurnIds: ["t1"],
        },
        {
          type: "fact",
          statement: "leak",
          scope: { kind: "user", ownerIds: ["bob"] },
          sourceTurnIds: ["t1"],
        },
      ],
      corrections: [
        {
          targetId: "bobs",
          statement: "wrong",
          scope: { kind: "user", ownerIds: ["alice"] },
          sourceTurnIds: ["t2"],
        },
      ],
      confidenceAdjustments: [{ targetId: "missing", delta: 0.1, reason: "r", sourceTurnIds: ["t3"] }],
    });
    const targets = new Map([
      ["bobs", knowledgeObject({ id: "bobs", scope: { kind: "user", ownerIds: ["bob"] } })],
    ]);
    expect(findScopeViolations(delta, principal, targets, all).map((v) => v.path)).toEqual([
      "items.1.scope",
      "corrections.0.targetId",
      "confidenceAdjustments.0.targetId",
    ]);
  });

  it("gives the same reason for a missing id and an id in someone else's scope", () => {
    const delta = reflectionDeltaSchema.parse({
      sessionId: "s1",
      confidenceAdjustments: [
        { targetId: "missing", delta: 0.1, reason: "r", sourceTurnIds: ["t"] },
        { targetId: "bobs", delta: 0.1, reason: "r", sourceTurnIds: ["t"] },
      ],
    });
    const targets = new Map([
      ["bobs", knowledgeObject({ id: "bobs", scope: { kind: "user", ownerIds: ["bob"] } })],
    ]);
    const [missing, foreign] = findScopeViolations(delta, principal, targets, all);
    expect(missing?.reason.replace("missing", "X")).toBe(foreign?.reason.replace("bobs", "X"));
  });
});
