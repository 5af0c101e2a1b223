import { describe, expect, it } from "vitest";
import { knowledgeObject, storedObject } from "../testing/fixtures.js";
import {
  forgetSubjects,
  forgottenIdSubject,
  forgottenMarks,
  forgottenOwnerSubject,
  forgottenRefusal,
  forgottenStatementSubject,
  maturingStatementSubject,
  ownerKeyOf,
  withoutForgotten,
} from "./forgotten.js";

describe("forget tombstones", () => {
  const object = storedObject({ id: "ko_1", statement: "The boat is in the north shed" });

  it("name an object by its id and by its statement within its owner, as digests", () => {
    const subjects = forgetSubjects(object);
    expect(subjects.map((s) => s.kind)).toEqual(["object", "statement"]);
    for (const { subject } of subjects) {
      expect(subject).toMatch(/^[0-9a-f]{64}$/);
      expect(subject).not.toContain("ko_1");
    }
    expect(subjects[0]?.subject).toBe(forgottenIdSubject("ko_1"));
  });

  it("find the same words again (case, spacing, final punctuation aside) in the same owner's knowledge only", () => {
    const [, statement] = forgetSubjects(object);
    expect(forgottenStatementSubject("household/h1", "the boat is in the  north shed.")).toBe(
      statement?.subject,
    );
    expect(forgottenStatementSubject("household/h2", object.statement)).not.toBe(statement?.subject);
    expect(forgottenStatementSubject("user/h1", object.statement)).not.toBe(statement?.subject);
  });

  it("are recorded with the forget's time and the owner's digest, never an id or words in clear", () => {
    const marks = forgottenMarks([object], "2026-11-29T10:00:00.000Z");
    expect(marks).toEqual(
      forgetSubjects(object).map(({ subject, kind }) => ({
        subject,
        kind,
        forgottenAt: "2026-11-29T10:00:00.000Z",
        owner: forgottenOwnerSubject(ownerKeyOf(object) ?? ""),
      })),
    );
    expect(JSON.stringify(marks)).not.toMatch(/ko_1|boat/);
  });

  it("name no owner for shared knowledge, which nobody forgets alone", () => {
    const shared = storedObject({ scope: "shared", owner: {}, privacy: "public" });
    expect(ownerKeyOf(shared)).toBeUndefined();
    expect(forgetSubjects(shared).map((s) => s.kind)).toEqual(["object"]);
  });

  it("match a reflected object by its scope's owner as a stored one", () => {
    const reflected = knowledgeObject({
      id: "reflect-1",
      statement: "The boat is in the north shed",
      scope: { kind: "household", ownerIds: ["h1"] },
    });
    expect(maturingStatementSubject(reflected)).toBe(forgetSubjects(object)[1]?.subject);
    expect(
      maturingStatementSubject({ ...reflected, scope: { kind: "shared", ownerIds: [] } }),
    ).toBeUndefined();
  });

  it("refuse an ingest naming the events, for good", () => {
    expect(forgottenRefusal(["events.0", "events.2"], "2026-04-01T00:00:00.000Z")).toBe(
      "events.0, events.2: knowledge the person asked to forget (at 2026-04-01T00:00:00.000Z); refused for good, do not retry",
    );
  });
});

describe("a reflection's plan without forgotten objects", () => {
  it("drops them and the links other objects were given to them; the rest of the plan stands", () => {
    const again = knowledgeObject({
      id: "new-forgotten",
      links: [{ relation: "supersedes", targetId: "old" }],
    });
    const fresh = knowledgeObject({
      id: "new-kept",
      links: [{ relation: "related", targetId: "new-forgotten" }],
    });
    const old = knowledgeObject({
      id: "old",
      state: "invalidated",
      links: [
        { relation: "supersededBy", targetId: "new-forgotten" },
        { relation: "related", targetId: "x" },
      ],
    });
    const kept = withoutForgotten([again, fresh], [old], new Set(["new-forgotten"]));
    expect(kept.created.map((o) => o.id)).toEqual(["new-kept"]);
    expect(kept.created[0]?.links).toEqual([]);
    expect(kept.updated).toEqual([{ ...old, links: [{ relation: "related", targetId: "x" }] }]);
    expect(withoutForgotten([again], [old], new Set())).toEqual({ created: [again], updated: [old] });
  });
});
