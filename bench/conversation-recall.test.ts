import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  loadLocomo,
  locomoConversation,
  parseSessionTime,
  renderTurn,
  scoreRanking,
  summarizeByKind,
} from "./conversation-recall.js";

// Shaped as LoCoMo publishes it: speakers, numbered sessions with their times, dialogue ids, categorised questions.
const sample = {
  speaker_a: "Caroline",
  speaker_b: "Melanie",
  session_2_date_time: "7:55 pm on 9 June, 2023",
  session_2: [
    { speaker: "Caroline", dia_id: "D2:1", text: "I gave a talk at the school last week." },
    { speaker: "Melanie", dia_id: "D2:2", text: "The kids and I went camping." },
  ],
  session_1_date_time: "1:56 pm on 8 May, 2023",
  session_1: [
    { speaker: "Caroline", dia_id: "D1:1", text: "I went to the support group yesterday." },
    { speaker: "Melanie", dia_id: "D1:2", text: "I painted a sunrise last year.", img_url: ["x"] },
  ],
  qa: [
    {
      question: "When did Caroline go to the support group?",
      answer: "7 May 2023",
      evidence: ["D1:1"],
      category: 2,
    },
    { question: "What do both enjoy outdoors?", answer: "camping", evidence: ["D2:2", "D1:2"], category: 1 },
    { question: "What is Melanie's favourite opera?", answer: "none", evidence: ["D2:2"], category: 5 },
    { question: "Where did Caroline talk?", answer: "school", evidence: ["D:2:1"], category: 4 },
  ],
};

describe("LoCoMo's conversations as a conversation set", () => {
  let dir: string | undefined;
  afterEach(() => {
    if (dir !== undefined) rmSync(dir, { recursive: true, force: true });
  });

  it("reads session times as UTC instants", () => {
    expect(parseSessionTime("1:56 pm on 8 May, 2023")).toBe("2023-05-08T13:56:00.000Z");
    expect(parseSessionTime("12:09 am on 13 September, 2023")).toBe("2023-09-13T00:09:00.000Z");
    expect(parseSessionTime("12:30 pm on 1 January 2024")).toBe("2024-01-01T12:30:00.000Z");
    expect(() => parseSessionTime("yesterday")).toThrow(/unreadable session time "yesterday"/);
  });

  it("orders sessions by number, keeps turn ids, and drops adversarial questions and evidence naming no turn", () => {
    const conversation = locomoConversation(sample, "26");
    expect(conversation.id).toBe("26");
    expect(conversation.speakers).toEqual(["Caroline", "Melanie"]);
    expect(conversation.sessions.map((session) => session.at)).toEqual([
      "2023-05-08T13:56:00.000Z",
      "2023-06-09T19:55:00.000Z",
    ]);
    expect(conversation.sessions[0]?.turns[1]).toEqual({
      id: "D1:2",
      speaker: "Melanie",
      text: "I painted a sunrise last year.",
    });
    expect(conversation.questions).toEqual([
      { question: "When did Caroline go to the support group?", kind: "temporal", evidence: ["D1:1"] },
      { question: "What do both enjoy outdoors?", kind: "multi-hop", evidence: ["D2:2", "D1:2"] },
    ]);
  });

  it("loads the published list form and a folder of single conversations alike", () => {
    dir = mkdtempSync(join(tmpdir(), "locomo-"));
    writeFileSync(
      join(dir, "locomo10.json"),
      JSON.stringify([{ sample_id: "conv-26", conversation: sample, qa: sample.qa }]),
    );
    writeFileSync(join(dir, "30.json"), JSON.stringify(sample));
    writeFileSync(join(dir, "notes.txt"), "not a conversation");
    const conversations = loadLocomo(dir);
    expect(conversations.map((conversation) => conversation.id)).toEqual(["30", "conv-26"]);
    expect(conversations.map((conversation) => conversation.questions.length)).toEqual([2, 2]);
  });

  it("names what a malformed conversation lacks", () => {
    expect(() => locomoConversation({ speaker_a: "A" }, "x")).toThrow(
      /conversation x names no speaker_a and speaker_b/,
    );
    expect(() =>
      locomoConversation({ speaker_a: "A", speaker_b: "B", session_1: [], session_1_date_time: 3 }, "y"),
    ).toThrow(/conversation y session 1 has no date_time/);
    expect(() =>
      locomoConversation(
        {
          speaker_a: "A",
          speaker_b: "B",
          session_1: [{ speaker: "A" }],
          session_1_date_time: "1:00 am on 1 May, 2023",
        },
        "z",
      ),
    ).toThrow(/conversation z session_1\[0\] lacks speaker, dia_id or text/);
  });
});

describe("writing a turn into memory", () => {
  const turn = { id: "D1:1", speaker: "Caroline", text: "I went to the support group yesterday." };
  it("writes the words alone, with the speaker, or with the speaker and the session's date", () => {
    expect(renderTurn(turn, "2023-05-08T13:56:00.000Z", "plain")).toBe(
      "I went to the support group yesterday.",
    );
    expect(renderTurn(turn, "2023-05-08T13:56:00.000Z", "speaker")).toBe(
      "Caroline: I went to the support group yesterday.",
    );
    expect(renderTurn(turn, "2023-05-08T13:56:00.000Z", "dated")).toBe(
      "[8 May 2023] Caroline: I went to the support group yesterday.",
    );
  });
});

describe("recall scores", () => {
  const twoTurns = { question: "q", kind: "multi-hop" as const, evidence: ["a", "b"] };

  it("counts the share of evidence among the first k and the first evidence's reciprocal rank", () => {
    const score = scoreRanking(["x", "a", "y", "z", "b"], twoTurns, [1, 2, 5]);
    expect(score.recall).toEqual({ 1: 0, 2: 0.5, 5: 1 });
    expect(score.reciprocalRank).toBe(0.5);
  });

  it("counts a turn ranked twice (two passages of one turn) once, at its first place", () => {
    const score = scoreRanking(["x", "x", "a", "a", "b"], twoTurns, [3]);
    expect(score.recall).toEqual({ 3: 1 });
    expect(score.reciprocalRank).toBe(0.5);
  });

  it("scores zero when no evidence was ranked", () => {
    expect(scoreRanking([], twoTurns, [10])).toEqual({
      kind: "multi-hop",
      recall: { 10: 0 },
      reciprocalRank: 0,
    });
  });

  it("averages over all questions and over each kind", () => {
    const temporal = { question: "t", kind: "temporal" as const, evidence: ["t"] };
    const summary = summarizeByKind(
      [scoreRanking(["a", "b"], twoTurns, [1, 2]), scoreRanking(["x", "y"], temporal, [1, 2])],
      [1, 2],
    );
    expect(summary.all).toEqual({ questions: 2, recall: { "@1": 0.25, "@2": 0.5 }, mrr: 0.5 });
    expect(summary.byKind["multi-hop"]).toEqual({ questions: 1, recall: { "@1": 0.5, "@2": 1 }, mrr: 1 });
    expect(summary.byKind.temporal).toEqual({ questions: 1, recall: { "@1": 0, "@2": 0 }, mrr: 0 });
    expect(summary.byKind["single-hop"]).toBeUndefined();
  });
});
