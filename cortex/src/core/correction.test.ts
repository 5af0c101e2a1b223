import { describe, expect, it } from "vitest";
import { storedObject } from "../testing/fixtures.js";
import { userDirectiveConfidence } from "./confidence.js";
import { correctionChannel, isCorrectable, planCorrection } from "./correction.js";

const now = "2026-04-01T10:00:00.000Z";
const old = storedObject({
  id: "k-old",
  statement: "The boat is in the north shed",
  claim: { subject: "boat", predicate: "kept in", object: "north shed" },
  confidence: 0.6,
  links: [{ rel: "related", targetId: "k-other" }],
});

describe("a person's correction", () => {
  it("invalidates the old object, never overwriting it, and links it to the new one", () => {
    const plan = planCorrection(old, "The boat is in the south shed", now);
    if (plan.kind !== "apply") throw new Error(plan.kind);
    expect(plan.invalidated).toMatchObject({
      id: "k-old",
      statement: old.statement,
      status: "invalidated",
      validity: { validFrom: old.validity.validFrom, invalidAt: now },
      updatedAt: now,
    });
    expect(plan.invalidated.confidence).toBeLessThan(old.confidence);
    expect(plan.invalidated.links).toEqual([
      { rel: "supersededBy", targetId: plan.created.id },
      { rel: "related", targetId: "k-other" },
    ]);
  });

  it("creates an active object with the person's trust in the old one's type, scope, owner, privacy and dimensions", () => {
    const plan = planCorrection(old, "The boat is in the south shed", now);
    if (plan.kind !== "apply") throw new Error(plan.kind);
    expect(plan.created).toMatchObject({
      statement: "The boat is in the south shed",
      type: old.type,
      scope: old.scope,
      owner: old.owner,
      privacy: old.privacy,
      consent: old.consent,
      dimensions: old.dimensions,
      status: "active",
      userDirective: true,
      confidence: userDirectiveConfidence,
      provenance: { source: "user", channel: correctionChannel, observedAt: now, ingestedAt: now },
      validity: { validFrom: now, invalidAt: null },
      links: [{ rel: "supersedes", targetId: "k-old" }],
    });
    expect(plan.created.claim).toBeUndefined();
  });

  it("derives the new id from the old id and the statement, so the same correction is the same object", () => {
    const a = planCorrection(old, "The boat is in the south shed", now);
    const b = planCorrection(old, "the boat is in the SOUTH shed.", "2026-04-02T00:00:00.000Z");
    const c = planCorrection(old, "The boat is at the marina", now);
    const other = planCorrection({ ...old, id: "k-old-2" }, "The boat is in the south shed", now);
    if (a.kind !== "apply" || b.kind !== "apply" || c.kind !== "apply" || other.kind !== "apply")
      throw new Error("apply expected");
    expect(b.created.id).toBe(a.created.id);
    expect(c.created.id).not.toBe(a.created.id);
    expect(other.created.id).not.toBe(a.created.id);
  });

  it("answers a retried correction with its object, and refuses correcting what is no longer active", () => {
    const first = planCorrection(old, "The boat is in the south shed", now);
    if (first.kind !== "apply") throw new Error(first.kind);
    const retry = planCorrection(first.invalidated, "The boat is in the south shed", now);
    expect(retry).toMatchObject({ kind: "replay", created: { id: first.created.id } });
    expect(planCorrection(first.invalidated, "The boat is at the marina", now)).toEqual({
      kind: "inactive",
      status: "invalidated",
    });
    expect(planCorrection({ ...old, status: "demoted" }, "The boat is at the marina", now).kind).toBe(
      "inactive",
    );
  });

  it("treats an object past its validity as no longer active", () => {
    expect(isCorrectable(old, now)).toBe(true);
    expect(
      isCorrectable({ ...old, validity: { ...old.validity, invalidAt: "2026-03-31T00:00:00.000Z" } }, now),
    ).toBe(false);
    expect(
      isCorrectable({ ...old, validity: { ...old.validity, invalidAt: "2026-05-01T00:00:00.000Z" } }, now),
    ).toBe(true);
  });

  it("refuses a correction that says what the object says", () => {
    expect(planCorrection(old, "  the boat is in the north shed. ", now)).toEqual({ kind: "unchanged" });
  });

  it("redacts the statement; contact details stay only in a user's own item, which becomes private", () => {
    const secret = planCorrection(old, "The shed code is password=Shed-Door-1234-xyz", now);
    if (secret.kind !== "apply") throw new Error(secret.kind);
    expect(secret.created.statement).not.toContain("Shed-Door-1234-xyz");
    expect(secret.redactions).toBeGreaterThan(0);
    const household = planCorrection(old, "Call the harbour master on +49 170 1234567", now);
    if (household.kind !== "apply") throw new Error(household.kind);
    expect(household.created.statement).toContain("<PHONE>");
    const mine = storedObject({ scope: "user", owner: { userId: "alice" }, privacy: "public" });
    const own = planCorrection(mine, "My number is +49 170 1234567", now);
    if (own.kind !== "apply") throw new Error(own.kind);
    expect(own.created.statement).toContain("+49 170 1234567");
    expect(own.created.privacy).toBe("private");
  });

  it("keeps its own link when the old object's links are full", () => {
    const full = {
      ...old,
      links: Array.from({ length: 64 }, (_, i) => ({ rel: "related" as const, targetId: `k-${i}` })),
    };
    const plan = planCorrection(full, "The boat is in the south shed", now);
    if (plan.kind !== "apply") throw new Error(plan.kind);
    expect(plan.invalidated.links).toHaveLength(64);
    expect(plan.invalidated.links[0]).toEqual({ rel: "supersededBy", targetId: plan.created.id });
    expect(planCorrection(plan.invalidated, "The boat is in the south shed", now).kind).toBe("replay");
  });
});
