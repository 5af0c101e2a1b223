import { type MemoryDocument, memoryDocumentSchema } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { knowledgeObject } from "../testing/fixtures.js";
import {
  erasedPhrases,
  erasureSubject,
  extractiveSummary,
  refusedByErasure,
  scrubArtifact,
  scrubLines,
  withoutPerson,
} from "./erasure.js";
import { renderArtifact } from "./proposal.js";

const entry = (id: string, statement: string, confidence: number) =>
  knowledgeObject({ id, type: "fact", statement, confidence, validFrom: "2026-02-01T00:00:00.000Z" });

describe("tombstones", () => {
  it("name a person by a digest and refuse what was observed at or before the erasure only", () => {
    expect(erasureSubject("alice")).toMatch(/^[a-f0-9]{64}$/);
    expect(erasureSubject("alice")).not.toBe(erasureSubject("bob"));
    const at = "2026-03-01T10:00:00.000Z";
    expect(refusedByErasure("2026-03-01T09:59:59.999Z", at)).toBe(true);
    expect(refusedByErasure(at, at)).toBe(true);
    expect(refusedByErasure("2026-03-01T11:00:00+01:00", at)).toBe(true);
    expect(refusedByErasure("2026-03-01T10:00:00.001Z", at)).toBe(false);
    expect(refusedByErasure("2020-01-01T00:00:00.000Z", undefined)).toBe(false);
  });
});

describe("artifact scrub", () => {
  const artifact = renderArtifact("Facts (household h1)", [
    entry("ko_alice1", "Alice keeps the spare key under the blue flowerpot", 0.9),
    entry("ko_bob1", "Bob waters the tomatoes every evening", 0.8),
    entry("ko_alice2", "Alice is allergic to hazelnuts", 0.7),
  ]);

  it("removes the person's entries by id from front-matter and body and recomputes the mean", () => {
    const scrubbed = scrubArtifact(artifact, { ids: new Set(["ko_alice1", "ko_alice2"]), phrases: [] });
    expect(scrubbed.outcome).toBe("rewritten");
    if (scrubbed.outcome !== "rewritten") return;
    expect(scrubbed.content).toBe(
      renderArtifact("Facts (household h1)", [
        entry("ko_bob1", "Bob waters the tomatoes every evening", 0.8),
      ]),
    );
  });

  it("deletes a Cortex artifact whose every entry is the person's, and leaves unrelated files alone", () => {
    const own = renderArtifact("Facts (user alice)", [entry("ko_alice1", "Alice likes tea", 0.9)]);
    expect(scrubArtifact(own, { ids: new Set(["ko_alice1"]), phrases: [] })).toEqual({ outcome: "deleted" });
    expect(scrubArtifact(artifact, { ids: new Set(["ko_carol"]), phrases: [] })).toEqual({
      outcome: "unchanged",
    });
    expect(
      scrubArtifact("bin\u0000ary Alice is allergic to hazelnuts", {
        ids: new Set(),
        phrases: ["Alice is allergic to hazelnuts"],
      }),
    ).toEqual({
      outcome: "unchanged",
    });
  });

  it("falls back to quoted statements in a hand-edited or hand-written file", () => {
    const edited = artifact.replace("# Facts", "- a bullet someone added\n\n# Facts");
    const scrubbed = scrubArtifact(edited, {
      ids: new Set(["ko_alice2"]),
      phrases: erasedPhrases(["Alice is   allergic to hazelnuts"]),
    });
    expect(scrubbed.outcome).toBe("rewritten");
    if (scrubbed.outcome !== "rewritten") return;
    expect(scrubbed.content).not.toContain("hazelnuts");
    expect(scrubbed.content).not.toContain("ko_alice2");
    expect(scrubbed.content).toContain("Bob waters the tomatoes");
    expect(
      scrubLines("notes\nAlice is allergic to hazelnuts, says Bob\nend", ["Alice is allergic to hazelnuts"]),
    ).toEqual({
      text: "notes\nend",
      removed: 1,
    });
  });

  it("does not search free text for short statements", () => {
    expect(erasedPhrases(["yes", "  Oslo ", "Alice moved to Oslo in May"])).toEqual([
      "Alice moved to Oslo in May",
    ]);
  });
});

describe("archived documents without a person", () => {
  const document = (messages: MemoryDocument["messages"], ownerIds: string[]): MemoryDocument =>
    memoryDocumentSchema.parse({
      createdAt: "2026-02-01T10:00:00.000Z",
      source: { sessionId: "s1", channel: "telegram" },
      messages,
      consentScope: { ownerIds, privacy: "household", allowRecall: true },
    });

  it("deletes a document the person owns alone", () => {
    const own = document([{ role: "user", content: "mine", authorId: "alice" }], ["alice"]);
    expect(withoutPerson(own, "alice")).toEqual({ outcome: "deleted", removedMessages: 1 });
    expect(withoutPerson(own, "bob")).toEqual({ outcome: "unchanged" });
  });

  it("removes the person's turns, the answers to them and later quotes, and the person from the owners", () => {
    const shared = document(
      [
        { role: "system", content: "household assistant" },
        { role: "user", content: "my passport number is secret-4471", authorId: "alice" },
        { role: "assistant", content: "noted" },
        { role: "user", content: "what is for dinner?", authorId: "bob" },
        { role: "assistant", content: "pasta" },
        { role: "user", content: "she said my passport number is secret-4471", authorId: "bob" },
      ],
      ["alice", "bob"],
    );
    const scrubbed = withoutPerson(shared, "alice");
    expect(scrubbed.outcome).toBe("rewritten");
    if (scrubbed.outcome !== "rewritten") return;
    expect(scrubbed.removedMessages).toBe(3);
    expect(scrubbed.document.messages.map((m) => m.content)).toEqual([
      "household assistant",
      "what is for dinner?",
      "pasta",
    ]);
    expect(scrubbed.document.consentScope.ownerIds).toEqual(["bob"]);
    expect(extractiveSummary(scrubbed.document)).toBe("what is for dinner? pasta");
  });

  it("treats an unattributed turn as any owner's, and deletes what has no one else's turn left", () => {
    const unattributed = document(
      [
        { role: "user", content: "who wrote this?" },
        { role: "assistant", content: "someone" },
      ],
      ["alice", "bob"],
    );
    expect(withoutPerson(unattributed, "alice")).toEqual({ outcome: "deleted", removedMessages: 2 });
  });

  it("finds the person's turns in a document they do not own, and keeps the owners", () => {
    const household = document(
      [
        { role: "user", content: "hello from alice", authorId: "alice" },
        { role: "user", content: "hello from bob", authorId: "bob" },
      ],
      ["h1"],
    );
    const scrubbed = withoutPerson(household, "alice");
    expect(scrubbed).toMatchObject({ outcome: "rewritten", removedMessages: 1 });
    if (scrubbed.outcome === "rewritten") expect(scrubbed.document.consentScope.ownerIds).toEqual(["h1"]);
  });
});
