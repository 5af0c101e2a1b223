import {
  type KnowledgeObject,
  knowledgeObject,
  type PersonKnowledgeItem,
  type PersonKnowledgeResponse,
} from "@remram/contract";
import { describe, expect, it } from "vitest";
import {
  appRefusal,
  formatCorrected,
  formatErased,
  formatForgotten,
  formatKnowledgeItem,
  formatKnowledgeTable,
  truncate,
} from "./knowledge-format.js";

const at = "2026-03-01T10:00:00Z";

function object(id: string, statement: string, extra: Partial<KnowledgeObject> = {}): KnowledgeObject {
  return knowledgeObject.parse({
    id,
    statement,
    type: "fact",
    provenance: {
      key: `key-${id}`,
      source: "user",
      sessionId: "s-7",
      channel: "telegram",
      observedAt: at,
      ingestedAt: at,
    },
    scope: "user",
    owner: { userId: "alice" },
    privacy: "private",
    consent: {},
    dimensions: {},
    confidence: 0.8,
    lastReinforcedAt: at,
    validity: { validFrom: at },
    createdAt: at,
    updatedAt: at,
    ...extra,
  });
}

const item = (value: KnowledgeObject, contradictedBy: PersonKnowledgeItem["contradictedBy"] = []) => ({
  object: value,
  mine: value.scope === "user",
  contradictedBy,
});

describe("what kubectl remram knowledge prints", () => {
  const page: PersonKnowledgeResponse = {
    items: [
      item(object("ko_a1", "Alice keeps her bicycle\nin the garage")),
      item(
        object("ko_h1", "The boat is kept in the north shed", {
          scope: "household",
          owner: { householdId: "home" },
          privacy: "household",
          confidence: 0.55,
        }),
      ),
    ],
    nextCursor: "next-1",
    total: 7,
  };

  it("a table with the statement cut to the terminal, and how to get the next page", () => {
    const whole = formatKnowledgeTable(page);
    expect(whole.split("\n")).toEqual([
      "ID      TYPE   CONFIDENCE   STATUS   SCOPE       STATEMENT",
      "ko_a1   fact   0.80         active   user        Alice keeps her bicycle in the garage",
      "ko_h1   fact   0.55         active   household   The boat is kept in the north shed",
      "",
      "2 of 7; more with --cursor next-1",
    ]);
    const cut = formatKnowledgeTable(page, 70).split("\n");
    expect(cut[1]).toBe("ko_a1   fact   0.80         active   user        Alice keeps her bicy…");
    expect(cut[1]?.length).toBe(70);
    // A narrow terminal still shows some of the statement.
    expect(formatKnowledgeTable(page, 20).split("\n")[1]).toContain("Alice keeps her bic…");
    expect(formatKnowledgeTable({ ...page, nextCursor: null })).not.toContain("--cursor");
    expect(formatKnowledgeTable({ items: [], nextCursor: null, total: 0 })).toBe(
      "nothing remembered matches",
    );
    expect(truncate("abcdef", 4)).toBe("abc…");
    expect(truncate("abc", 4)).toBe("abc");
  });

  it("one object in full, with what replaced or contradicts it", () => {
    const corrected = object("ko_a1", "Alice keeps her bicycle in the garage", {
      status: "invalidated",
      validity: { validFrom: at, invalidAt: "2026-03-02T08:00:00Z" },
      dimensions: { place: ["garage", "home"] },
      links: [
        { rel: "supersededBy", targetId: "ko_a2" },
        { rel: "conflicts", targetId: "ko_b9" },
      ],
    });
    const text = formatKnowledgeItem(
      item(corrected, [{ id: "ko_a2", statement: "Alice keeps her bicycle in the hall" }, { id: "ko_b9" }]),
    );
    expect(text.split("\n")).toEqual([
      "id:              ko_a1",
      "statement:       Alice keeps her bicycle in the garage",
      "type:            fact",
      `confidence:      0.80 (reinforced 0 times, last ${at}; used 0 times)`,
      "status:          invalidated",
      "scope:           user (alice's)",
      "privacy:         private",
      `validity:        from ${at} until 2026-03-02T08:00:00Z`,
      `provenance:      source user, channel telegram, session s-7, observed ${at}, stored ${at}`,
      "dimensions:      place=garage,home",
      "links:           supersededBy ko_a2, conflicts ko_b9",
      'replaced by:     ko_a2 "Alice keeps her bicycle in the hall"',
      "contradicted by: ko_b9 (not yours to see)",
      `created:         ${at}, updated ${at}`,
    ]);
  });

  it("a correction's two ids, and a forget's counts without the zeros", () => {
    expect(formatCorrected({ invalidated: "ko_a1", created: object("ko_a2", "Alice likes blue") })).toBe(
      "invalidated ko_a1 (kept for the history)\ncreated     ko_a2: Alice likes blue",
    );
    const zero = {
      knowledgeDeleted: 0,
      vectorsDeleted: 0,
      linksRemoved: 0,
      dimensionValuesRemoved: 0,
      proposalsDeleted: 0,
      reviewsDeleted: 0,
      recordsRewritten: 0,
      gitBlobsRewritten: 0,
      gitCommitsRewritten: 0,
      gitCommitsDropped: 0,
      workspaceFilesChanged: 0,
      artifactChunksChanged: 0,
    };
    expect(
      formatForgotten({
        auditId: "au-1",
        forgottenAt: at,
        forgotten: 2,
        alreadyForgotten: 1,
        counts: { ...zero, knowledgeDeleted: 2, linksRemoved: 1 },
        durationMs: 40,
      }),
    ).toBe(
      `forgot 2 objects (1 forgotten before) at ${at} in 40 ms; audit au-1\nknowledge deleted 2, links removed 1`,
    );
    expect(
      formatForgotten({
        auditId: "au-2",
        forgottenAt: at,
        forgotten: 0,
        alreadyForgotten: 1,
        counts: zero,
        durationMs: 3,
      }),
    ).toContain("no store changed");
    const erased = formatErased("alice", {
      auditId: "au-3",
      erasedAt: at,
      knowledgeDeleted: 5,
      chunksDeleted: 0,
      archiveErased: 0,
      counts: {
        ...zero,
        chunksDeleted: 0,
        referencesRepointed: 0,
        archiveErased: 0,
        archiveRewritten: 0,
        receiptsTombstoned: 0,
        knowledgeDeleted: 5,
      },
      durationMs: 900,
    });
    expect(erased).toContain(
      `forgot everything about alice at ${at} in 900 ms; audit au-3\nknowledge deleted 5\n`,
    );
  });

  it("the app's refusals in its own words, with where a member's credential comes from", () => {
    const body = (statusCode: number, message: string) => JSON.stringify({ statusCode, error: "x", message });
    expect(
      appRefusal(403, body(403, "only a household admin sees or changes another member's knowledge"), "u"),
    ).toBe(`remram-app refused: only a household admin sees or changes another member's knowledge
A household member's credential comes from a household admin: kubectl remram user add MEMBER -o kubeconfig (with --admin for a member who may see and forget other members' knowledge).`);
    expect(appRefusal(401, body(401, "the credential is not valid"), "u")).toMatch(
      /^remram-app did not accept your credential: the credential is not valid\n.*kubectl remram user add/,
    );
    expect(appRefusal(409, body(409, "ko_1 is invalidated"), "u")).toBe(
      "remram-app answered 409: ko_1 is invalidated",
    );
    expect(appRefusal(502, "<html><body>Bad Gateway</body></html>", "https://box")).toBe(
      "https://box answered 502: <html><body>Bad Gateway</body></html> (is it remram-app?)",
    );
    expect(appRefusal(404, "", "https://box")).toBe("https://box answered 404 (is it remram-app?)");
  });
});
