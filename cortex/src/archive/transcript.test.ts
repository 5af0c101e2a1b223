import { chunkLevels, transcriptArchiveRequest } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { canonicalise, redactDocument } from "./document.js";
import {
  summaryWords,
  transcriptChunkEvent,
  transcriptChunks,
  transcriptDocument,
  transcriptSummary,
  transcriptText,
} from "./transcript.js";

const principal = { userId: "alice", householdId: "h1", agentId: "main" };
const now = "2026-03-02T12:00:00.000Z";

function request(overrides: Record<string, unknown> = {}) {
  return transcriptArchiveRequest.parse({
    principal,
    sessionId: "0f5e8a42-7c1b-4d7e-9a53-2b7d1e0c9f11",
    channel: "telegram",
    endReason: "reset",
    endedAt: "2026-03-01T18:00:00.000Z",
    messages: [
      { role: "user", content: "Where should the tomatoes go this year?", at: "2026-03-01T17:00:05.000Z" },
      { role: "assistant", content: "The north bed gets the most sun.", at: "2026-03-01T17:00:09.000Z" },
      { role: "user", content: "And the basil?", at: "2026-03-01T16:59:00.000Z" },
    ],
    ...overrides,
  });
}

describe("a transcript as an archive document", () => {
  it("is owned by the principal alone, who wrote its user turns, and dated by its earliest message", () => {
    const document = transcriptDocument(request());
    expect(document.consentScope).toEqual({ ownerIds: ["alice"], privacy: "private", allowRecall: true });
    expect(document.createdAt).toBe("2026-03-01T16:59:00.000Z");
    expect(document.source).toEqual({
      sessionId: "0f5e8a42-7c1b-4d7e-9a53-2b7d1e0c9f11",
      channel: "telegram",
      agentId: "main",
    });
    expect(document.messages.map((m) => m.authorId)).toEqual(["alice", undefined, "alice"]);
    expect(document.tags).toEqual(["transcript", "ended:reset"]);
  });

  it("falls back to the end time when no message carries one, and names its part of a long session", () => {
    const document = transcriptDocument(
      request({
        messages: [{ role: "user", content: "hello" }],
        part: { index: 1, count: 3 },
      }),
    );
    expect(document.createdAt).toBe("2026-03-01T18:00:00.000Z");
    expect(document.tags).toContain("part:2/3");
  });

  it("hashes the same when the same session is sent again, and differently when a word changes", () => {
    const once = canonicalise(redactDocument(transcriptDocument(request())));
    const again = canonicalise(redactDocument(transcriptDocument(request())));
    expect(again.hash).toBe(once.hash);
    const changed = request();
    const first = changed.messages[0];
    if (first) first.content = "Where should the peppers go this year?";
    expect(canonicalise(redactDocument(transcriptDocument(changed))).hash).not.toBe(once.hash);
  });

  it("keeps no credential: redaction runs before hashing, and redacting again changes nothing", () => {
    const secret = "sk-proj-0123456789abcdefghijklmnopqrstuvwxyzABCD";
    const document = redactDocument(
      transcriptDocument(request({ messages: [{ role: "user", content: `my key is ${secret}` }] })),
    );
    expect(JSON.stringify(document)).not.toContain(secret);
    expect(redactDocument(document)).toEqual(document);
  });
});

describe("a transcript's text, summary and chunks", () => {
  const document = transcriptDocument(request());

  it("renders one paragraph per message, speaker first, and skips empty messages", () => {
    const text = transcriptText({
      ...document,
      messages: [...document.messages, { role: "tool", content: "  " }],
    });
    expect(text.split("\n\n")).toEqual([
      "User: Where should the tomatoes go this year?",
      "Assistant: The north bed gets the most sun.",
      "User: And the basil?",
    ]);
  });

  it("summarises where and when, then every user turn's lead, then the assistant's, within the word budget", () => {
    expect(transcriptSummary(document)).toBe(
      "Conversation on telegram, 2026-03-01: Where should the tomatoes go this year? · And the basil? · " +
        "The north bed gets the most sun.",
    );
    const long = transcriptDocument(
      request({
        messages: [{ role: "user", content: Array.from({ length: 300 }, (_, i) => `w${i}`).join(" ") }],
      }),
    );
    const summary = transcriptSummary(long);
    expect(
      summary
        .split(": ")[1]
        ?.split(" ")
        .filter((w) => /^w\d+$/.test(w)).length,
    ).toBeLessThanOrEqual(summaryWords);
    expect(summary).toContain("…");
  });

  it("chunks into L0, L1 and L2, every chunk citing the hash as its source and owned by the principal", () => {
    const hash = "a".repeat(64);
    const chunks = transcriptChunks(document, hash, transcriptSummary(document), principal, now);
    expect(new Set(chunks.map((chunk) => chunk.level))).toEqual(new Set(chunkLevels));
    for (const chunk of chunks) {
      expect(chunk).toMatchObject({
        sourceId: hash,
        sourceKind: "transcript",
        scope: "user",
        owner: { userId: "alice", householdId: "h1" },
        privacy: "private",
      });
    }
    expect(chunks.find((chunk) => chunk.level === "L0")?.text).toBe(transcriptSummary(document));
    expect(
      chunks
        .filter((chunk) => chunk.level === "L2")
        .map((chunk) => chunk.text)
        .join(" "),
    ).toContain("The north bed gets the most sun.");
    // Same document, same hash: the same ids, so a resend is a duplicate, never a second copy.
    expect(
      transcriptChunks(document, hash, transcriptSummary(document), principal, now).map((c) => c.id),
    ).toEqual(chunks.map((chunk) => chunk.id));
    expect(transcriptChunks(document, "b".repeat(64), "s", principal, now)[0]?.id).not.toBe(chunks[0]?.id);
  });

  it("chunks only the summary of a document that may not be recalled in full", () => {
    const closed = transcriptDocument(
      request({
        allowRecall: false,
        messages: [
          { role: "user", content: "Tell me the family recipe." },
          {
            role: "assistant",
            content: `${"Here it is, as your grandmother wrote it down long ago. ".repeat(3)}The north bed gets the most sun.`,
          },
        ],
      }),
    );
    const summary = transcriptSummary(closed);
    expect(transcriptChunkEvent(closed, "c".repeat(64), summary, principal)).toMatchObject({ text: summary });
    const texts = transcriptChunks(closed, "c".repeat(64), summary, principal, now).map(
      (chunk) => chunk.text,
    );
    expect(texts.join(" ")).not.toContain("The north bed gets the most sun.");
  });

  it("splits a long session into bounded passages, sections breaking between messages", () => {
    const messages = Array.from({ length: 60 }, (_, i) => ({
      role: i % 2 === 0 ? "user" : "assistant",
      content: `message ${i} ${"word ".repeat(40)}`,
    }));
    const long = transcriptDocument(request({ messages }));
    const chunks = transcriptChunks(long, "d".repeat(64), transcriptSummary(long), principal, now);
    const sections = chunks.filter((chunk) => chunk.level === "L1");
    expect(sections.length).toBeGreaterThan(3);
    for (const section of sections) expect(section.text).toMatch(/^(User|Assistant): message \d+/);
    for (const passage of chunks.filter((chunk) => chunk.level === "L2")) {
      expect(passage.text.split(" ").length).toBeLessThanOrEqual(120);
      expect(passage.parentId).toMatch(/_l1_\d+$/);
    }
  });
});
