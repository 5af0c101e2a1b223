import type { KnowledgeObject } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { storedObject } from "../testing/fixtures.js";
import {
  authorityOf,
  contradictedBy,
  decodeCursor,
  encodeCursor,
  isMine,
  isVisible,
  listingDigest,
  listingSearch,
  mayCorrect,
  mayForget,
  visibilityClause,
} from "./person-knowledge.js";

const alice = { userId: "alice", householdId: "home" };
const aliceItem = storedObject({ id: "a", scope: "user", owner: { userId: "alice" }, privacy: "private" });
const bobItem = storedObject({ id: "b", scope: "user", owner: { userId: "bob" }, privacy: "public" });
const homeItem = storedObject({ id: "h", scope: "household", owner: { householdId: "home" } });
const listing = {
  status: ["active", "demoted", "invalidated"] as const,
  scopes: ["user", "household"] as const,
};
const all = { ...listing, status: [...listing.status], scopes: [...listing.scopes] };

describe("what a person sees of what is remembered", () => {
  it("their own user-scope items whatever the privacy, the household's public and household ones", () => {
    for (const privacy of ["public", "household", "private", "secret"] as const)
      expect(isVisible({ ...aliceItem, privacy }, alice), privacy).toBe(true);
    expect(isVisible(homeItem, alice)).toBe(true);
    expect(isVisible({ ...homeItem, privacy: "public" }, alice)).toBe(true);
    // A private household item has no owning user; a secret one is never retrieved.
    expect(isVisible({ ...homeItem, privacy: "private" }, alice)).toBe(false);
    expect(isVisible({ ...homeItem, privacy: "secret" }, alice)).toBe(false);
  });

  it("never another person's items, another household's, shared ones, or the household's without a household", () => {
    expect(isVisible(bobItem, alice)).toBe(false);
    expect(isVisible({ ...homeItem, owner: { householdId: "next-door" } }, alice)).toBe(false);
    expect(isVisible(storedObject({ scope: "shared", owner: {}, privacy: "public" }), alice)).toBe(false);
    expect(isVisible(homeItem, { userId: "alice", householdId: undefined })).toBe(false);
  });

  it("mine means a user-scope item of their own", () => {
    expect(isMine(aliceItem, alice)).toBe(true);
    expect(isMine(homeItem, alice)).toBe(false);
    expect(isMine(bobItem, alice)).toBe(false);
  });

  it("corrects what they see; forgets their own, and the household's only as an administrator", () => {
    expect(mayCorrect(homeItem, alice)).toBe(true);
    expect(mayCorrect(bobItem, alice)).toBe(false);
    expect(mayForget(aliceItem, alice, false)).toBe(true);
    expect(mayForget(homeItem, alice, false)).toBe(false);
    expect(mayForget(homeItem, alice, true)).toBe(true);
    expect(mayForget(bobItem, alice, true)).toBe(false);
  });

  it("filters by the same rule, for the scopes asked for", () => {
    const both = JSON.stringify(visibilityClause(alice, ["user", "household"]));
    expect(both).toContain('{"term":{"owner.userId":"alice"}}');
    expect(both).toContain('{"terms":{"privacy":["public","household"]}}');
    expect(JSON.stringify(visibilityClause(alice, ["user"]))).not.toContain("household");
    expect(visibilityClause({ userId: "alice", householdId: undefined }, ["household"])).toEqual({
      bool: { must_not: { match_all: {} } },
    });
  });
});

describe("who may act for whom", () => {
  const own = { userId: "alice", requestedBy: "alice" };
  const other = { userId: "bob", requestedBy: "alice" };

  it("the admin caller always, with an administrator's power", () => {
    for (const action of ["list", "correct", "forget"] as const)
      expect(authorityOf(action, { caller: "admin", ...other })).toEqual({ ok: true, admin: true });
  });

  it("the app for the requesting person; for another person only with asAdmin, never to correct", () => {
    expect(authorityOf("list", { caller: "app", ...own })).toEqual({ ok: true, admin: false });
    expect(authorityOf("list", { caller: "app", ...other }).ok).toBe(false);
    expect(authorityOf("list", { caller: "app", ...other, asAdmin: true })).toEqual({
      ok: true,
      admin: true,
    });
    expect(authorityOf("forget", { caller: "app", ...other, asAdmin: true })).toEqual({
      ok: true,
      admin: true,
    });
    expect(authorityOf("forget", { caller: "app", ...own, asAdmin: true })).toEqual({
      ok: true,
      admin: true,
    });
    expect(authorityOf("correct", { caller: "app", ...own })).toEqual({ ok: true, admin: false });
    expect(authorityOf("correct", { caller: "app", ...other, asAdmin: true }).ok).toBe(false);
  });

  it("no other caller", () => {
    expect(authorityOf("list", { caller: "gateway", ...own }).ok).toBe(false);
  });
});

describe("contradictions of a listed object", () => {
  it("conflicts and the correction that replaced it, with statements only where the person may see them", () => {
    const object = {
      links: [
        { rel: "supersededBy", targetId: "h" },
        { rel: "related", targetId: "a" },
        { rel: "conflicts", targetId: "b" },
        { rel: "conflicts", targetId: "gone" },
        { rel: "conflicts", targetId: "h" },
      ],
    } satisfies Pick<KnowledgeObject, "links">;
    const loaded = new Map([
      ["h", homeItem],
      ["a", aliceItem],
      ["b", bobItem],
    ]);
    expect(contradictedBy(object, loaded, alice)).toEqual([
      { id: "h", statement: homeItem.statement },
      { id: "b" },
      { id: "gone" },
    ]);
  });
});

describe("the listing's cursor", () => {
  const digest = listingDigest(alice, all);

  it("round-trips the page's end for the same listing", () => {
    const cursor = encodeCursor(digest, [1_767_225_600_000, "ko_abc"]);
    expect(cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor(cursor, digest)).toEqual({ ok: true, after: [1_767_225_600_000, "ko_abc"] });
  });

  it("is refused for another person, household or filter, and when it is not one a listing made", () => {
    const cursor = encodeCursor(digest, [3.5, "ko_abc"]);
    for (const other of [
      listingDigest({ ...alice, userId: "bob" }, all),
      listingDigest({ ...alice, householdId: undefined }, all),
      listingDigest(alice, { ...all, query: "boat" }),
      listingDigest(alice, { ...all, status: ["active"] }),
    ]) {
      expect(other).not.toBe(digest);
      expect(decodeCursor(cursor, other)).toMatchObject({
        ok: false,
        message: expect.stringMatching(/another/),
      });
    }
    const forged = (value: unknown) => Buffer.from(JSON.stringify(value)).toString("base64url");
    for (const bad of [
      "%%%",
      forged([1]),
      forged({ l: digest, a: ["x", "y"] }),
      forged({ l: digest, a: [1] }),
    ])
      expect(decodeCursor(bad, digest).ok).toBe(false);
  });

  it("does not depend on the order filters were listed in", () => {
    expect(listingDigest(alice, { ...all, status: ["invalidated", "active", "demoted"] })).toBe(digest);
  });
});

describe("the listing's search", () => {
  it("newest change first without words, best match first with them, one hit more than the page", () => {
    const newest = listingSearch(alice, { ...all, limit: 10 }, undefined, ["id"]);
    expect(newest).toMatchObject({
      size: 11,
      sort: [{ updatedAt: "desc" }, { id: "asc" }],
      track_total_hits: true,
    });
    expect(newest).not.toHaveProperty("search_after");
    const words = listingSearch(alice, { ...all, limit: 10, query: "boat shed" }, [2.5, "ko_1"], ["id"]);
    expect(words).toMatchObject({
      sort: [{ _score: "desc" }, { id: "asc" }],
      search_after: [2.5, "ko_1"],
      query: { bool: { must: [{ match: { statement: { query: "boat shed" } } }] } },
    });
    expect(JSON.stringify(words)).toContain('{"terms":{"status":["active","demoted","invalidated"]}}');
  });
});
