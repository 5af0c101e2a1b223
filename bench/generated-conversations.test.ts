import { describe, expect, it } from "vitest";
import { questionKinds } from "./conversation-recall.js";
import { defaultGeneratedSet, fill, generateConversations } from "./generated-conversations.js";
import { changingFacts, plainFacts, preferences, relatives } from "./generated-facts.js";

const set = generateConversations();

describe("generateConversations", () => {
  it("gives the same set for the same seed and another for another seed", () => {
    expect(JSON.stringify(generateConversations())).toBe(JSON.stringify(set));
    const other = generateConversations({ ...defaultGeneratedSet, seed: 7 });
    expect(JSON.stringify(other)).not.toBe(JSON.stringify(set));
  });

  it("refuses fewer than two sessions, which a fact that changes needs", () => {
    expect(() => generateConversations({ ...defaultGeneratedSet, sessions: 1 })).toThrow(
      /at least 2 sessions/,
    );
  });

  it("asks every kind of question in every conversation, each with evidence that exists", () => {
    expect(set).toHaveLength(defaultGeneratedSet.conversations);
    for (const conversation of set) {
      const turns = new Map(
        conversation.sessions.flatMap((session, index) =>
          session.turns.map((turn) => [turn.id, { turn, index }]),
        ),
      );
      expect(new Set(conversation.questions.map((question) => question.kind))).toEqual(
        new Set(questionKinds),
      );
      for (const question of conversation.questions) {
        expect(question.evidence.length).toBeGreaterThan(0);
        for (const id of question.evidence) {
          // Evidence is what the person said, never the assistant's reply.
          expect(turns.get(id)?.turn.speaker).toBe(conversation.speakers[0]);
        }
        if (question.kind === "multi-hop") {
          expect(question.evidence).toHaveLength(2);
          const [first, second] = question.evidence.map((id) => turns.get(id)?.index ?? -1);
          expect(first).toBeLessThan(second as number);
        }
      }
    }
  });

  it("hides the evidence among small talk and distractors", () => {
    for (const conversation of set) {
      const turnCount = conversation.sessions.reduce((sum, session) => sum + session.turns.length, 0);
      const evidence = new Set(conversation.questions.flatMap((question) => question.evidence));
      expect(evidence.size / turnCount).toBeLessThan(0.15);
      // Sessions are days apart, in order.
      const times = conversation.sessions.map((session) => Date.parse(session.at));
      for (let i = 1; i < times.length; i += 1) expect(times[i]).toBeGreaterThan(times[i - 1] as number);
    }
  });
});

describe("the wordings", () => {
  const mentions = (question: string, values: readonly string[]) =>
    values.filter((value) => question.toLowerCase().includes(value.toLowerCase()));

  it("never put a fact's value into the question that asks for it", () => {
    for (const fact of plainFacts)
      for (const asked of fact.asked) expect(mentions(asked, fact.values)).toEqual([]);
    for (const fact of changingFacts) {
      expect(mentions(fact.askedNow, fact.values)).toEqual([]);
      expect(mentions(fact.askedWhen, fact.values)).toEqual([]);
    }
    for (const relative of relatives) {
      expect(mentions(relative.asked, [...relative.values, ...relative.names])).toEqual([]);
      // The relation is named in one turn and the property in another: the question needs both.
      expect(relative.property).not.toMatch(/sister|friend|manager|grandmother|godfather/);
    }
  });

  it("fills every slot and refuses a template with one it lacks", () => {
    expect(fill("{friend} plays the {value}.", { friend: "Rosa", value: "cello" })).toBe(
      "Rosa plays the cello.",
    );
    expect(() => fill("{friend} plays.", {})).toThrow(/names \{friend\}/);
    for (const preference of preferences) expect(preference.said.length).toBeGreaterThan(0);
  });
});

describe("the small talk", () => {
  it("is mostly distinct turns, not a few lines repeated (identical vectors behave nothing like real ones)", () => {
    for (const conversation of set) {
      const texts = conversation.sessions.flatMap((session) => session.turns.map((turn) => turn.text));
      expect(new Set(texts).size / texts.length).toBeGreaterThan(0.5);
    }
  });
});
