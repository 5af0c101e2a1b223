/**
 * "My memory" (remram-app), pure: what a person may see, correct and forget, who may act for whom, the listing's
 * search and its opaque cursor, and how a listed object's contradictions are shown. The service
 * (person-knowledge/) does the reads and writes.
 *
 * Seen: the person's own user-scope objects, whatever their privacy (theirs, as the export gives them whole), and
 * the household-scope objects of the appliance's household that the household's retrieval could inject (`public`
 * and `household`: a `private` item needs an owning user, a `secret` one is never retrieved). Never another
 * person's user-scope objects, and never `shared` ones: those are promoted or dreamed for everyone, about no one,
 * and neither a correction nor a forget of one person may change them.
 */
import { createHash } from "node:crypto";
import type {
  CallerName,
  ContradictingObject,
  KnowledgeObject,
  PersonKnowledgeRequest,
  PrivacyLevel,
} from "@remram/contract";
import { canonicalJson } from "./canonical-json.js";
import type { FilterClause } from "./policy.js";

/** The person a listing, correction or forget is for, and the appliance's household (unset: none). */
export interface Viewer {
  userId: string;
  householdId: string | undefined;
}

/** Household items a member sees: those the household's retrieval could inject. */
export const householdVisiblePrivacy: readonly PrivacyLevel[] = ["public", "household"];

type Owned = Pick<KnowledgeObject, "scope" | "owner" | "privacy">;

/** A user-scope object of the person's own. */
export function isMine(object: Owned, viewer: Viewer): boolean {
  return object.scope === "user" && object.owner.userId === viewer.userId;
}

function isHouseholds(object: Owned, viewer: Viewer): boolean {
  return (
    object.scope === "household" &&
    viewer.householdId !== undefined &&
    object.owner.householdId === viewer.householdId &&
    householdVisiblePrivacy.includes(object.privacy)
  );
}

export function isVisible(object: Owned, viewer: Viewer): boolean {
  return isMine(object, viewer) || isHouseholds(object, viewer);
}

/** Any member may correct the household's knowledge, as they may tell the assistant. */
export const mayCorrect = isVisible;

/** Forgetting household knowledge takes it from everyone: an administrator's act. */
export function mayForget(object: Owned, viewer: Viewer, admin: boolean): boolean {
  return isMine(object, viewer) || (admin && isHouseholds(object, viewer));
}

/** The visibility rule as a filter clause (the same rule as isVisible), for the scopes asked for. */
export function visibilityClause(
  viewer: Viewer,
  scopes: readonly PersonKnowledgeRequest["scopes"][number][],
): FilterClause {
  const should: FilterClause[] = [];
  if (scopes.includes("user")) {
    should.push({
      bool: { filter: [{ term: { scope: "user" } }, { term: { "owner.userId": viewer.userId } }] },
    });
  }
  if (scopes.includes("household") && viewer.householdId !== undefined) {
    should.push({
      bool: {
        filter: [
          { term: { scope: "household" } },
          { term: { "owner.householdId": viewer.householdId } },
          { terms: { privacy: [...householdVisiblePrivacy] } },
        ],
      },
    });
  }
  // Nothing visible must match nothing, not everything.
  if (should.length === 0) return { bool: { must_not: { match_all: {} } } };
  return { bool: { should, minimum_should_match: 1 } };
}

export type Action = "list" | "correct" | "forget";

export interface Acting {
  caller: CallerName;
  userId: string;
  requestedBy: string;
  asAdmin?: boolean | undefined;
}

export type Authority = { ok: true; admin: boolean } | { ok: false; message: string };

/**
 * Who may act for whom. The admin caller always, with an administrator's power. The app acts for the person signed
 * in to it (requestedBy): on their own data; on another person's (list, forget) or the household's (forget) only
 * with `asAdmin`, its assertion that the requester is an administrator. A correction is the person's own word, so
 * the app corrects only for the requester.
 */
export function authorityOf(action: Action, acting: Acting): Authority {
  if (acting.caller === "admin") return { ok: true, admin: true };
  if (acting.caller !== "app")
    return { ok: false, message: `the ${acting.caller} credential may not ${action}` };
  const own = acting.requestedBy === acting.userId;
  const asAdmin = action !== "correct" && acting.asAdmin === true;
  if (own || asAdmin) return { ok: true, admin: asAdmin };
  return {
    ok: false,
    message:
      action === "correct"
        ? "the app may correct only for the requesting person (requestedBy must equal userId)"
        : `the app may ${action} another person's knowledge only with asAdmin (requestedBy must equal userId otherwise)`,
  };
}

const contradicting = new Set(["conflicts", "supersededBy"]);

/** Ids of what contradicts or replaced the object, in link order, once each. */
export function contradictionIds(object: Pick<KnowledgeObject, "links">): string[] {
  return [...new Set(object.links.filter((l) => contradicting.has(l.rel)).map((l) => l.targetId))];
}

/** The contradictions as listed: with their statement where the person may see the other object, else the id. */
export function contradictedBy(
  object: Pick<KnowledgeObject, "links">,
  loaded: ReadonlyMap<string, KnowledgeObject>,
  viewer: Viewer,
): ContradictingObject[] {
  return contradictionIds(object).map((id) => {
    const other = loaded.get(id);
    return other !== undefined && isVisible(other, viewer) ? { id, statement: other.statement } : { id };
  });
}

type Listing = Pick<PersonKnowledgeRequest, "query" | "status" | "scopes">;

/**
 * What a cursor belongs to: the person, the household and the filters. A cursor of another listing would page
 * through results it was not made for, so it is refused.
 */
export function listingDigest(viewer: Viewer, listing: Listing): string {
  const key = canonicalJson({
    userId: viewer.userId,
    householdId: viewer.householdId ?? null,
    query: listing.query ?? null,
    status: [...listing.status].sort(),
    scopes: [...listing.scopes].sort(),
  });
  return createHash("sha256").update(key).digest("hex").slice(0, 16);
}

/** Where a page ended: the last hit's sort values, its score or change time (epoch ms) and its id. */
export type After = [number, string];

/** The page's end and the listing digest, as an opaque URL-safe string. */
export function encodeCursor(digest: string, after: After): string {
  return Buffer.from(JSON.stringify({ l: digest, a: after }), "utf8").toString("base64url");
}

export type DecodedCursor = { ok: true; after: After } | { ok: false; message: string };

export function decodeCursor(cursor: string, digest: string): DecodedCursor {
  let parsed: unknown;
  try {
    parsed = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"));
  } catch {
    return { ok: false, message: "cursor is not one this listing made" };
  }
  const { l, a } = (typeof parsed === "object" && parsed !== null ? parsed : {}) as {
    l?: unknown;
    a?: unknown;
  };
  // Checked in full: OpenSearch would refuse values of another type as Cortex's error, not the caller's.
  const valid =
    Array.isArray(a) &&
    a.length === 2 &&
    typeof a[0] === "number" &&
    Number.isFinite(a[0]) &&
    typeof a[1] === "string";
  if (typeof l !== "string" || !valid) return { ok: false, message: "cursor is not one this listing made" };
  if (l !== digest)
    return { ok: false, message: "cursor belongs to another listing (other person or filters)" };
  return { ok: true, after: [a[0], a[1]] as After };
}

/**
 * The listing's search: visible objects in the statuses asked for; with words, a BM25 match on the statement, best
 * first; without, newest change first. The id breaks ties so search_after pages without gaps or repeats. One hit
 * more than the page tells whether there is a next page.
 */
export function listingSearch(
  viewer: Viewer,
  request: Listing & Pick<PersonKnowledgeRequest, "limit">,
  after: After | undefined,
  fields: readonly string[],
): Record<string, unknown> {
  const filter = [visibilityClause(viewer, request.scopes), { terms: { status: [...request.status] } }];
  const query =
    request.query === undefined
      ? { bool: { filter } }
      : { bool: { filter, must: [{ match: { statement: { query: request.query } } }] } };
  return {
    size: request.limit + 1,
    query,
    _source: [...fields],
    sort:
      request.query === undefined
        ? [{ updatedAt: "desc" }, { id: "asc" }]
        : [{ _score: "desc" }, { id: "asc" }],
    track_total_hits: true,
    ...(after !== undefined && { search_after: [...after] }),
  };
}
