import { describe, expect, it } from "vitest";
import { type Conversation, conversationSchema } from "./pollution-corpus.js";
import { scoreConversation, totals } from "./pollution-score.js";

const conversation: Conversation = conversationSchema.parse({
  id: "01-test",
  household: "home-01",
  people: [{ userId: "ingrid", description: "keeps an allotment" }],
  seedMemory: [
    { key: "s1", userId: "ingrid", type: "fact", scope: "user", statement: "Ingrid's allotment is plot 14." },
  ],
  sessions: [
    {
      sessionId: "01-a",
      date: "2026-03-04",
      turns: [
        { userId: "ingrid", user: "morning!", assistant: "Morning!", category: "small_talk" },
        {
          userId: "ingrid",
          user: "my son Leo is allergic to nuts",
          assistant: "Noted.",
          category: "durable",
          facts: [
            {
              id: "f1",
              statement: "Leo is allergic to nuts.",
              kind: "fact",
              scope: "user",
              keyTerms: ["leo", "nut"],
            },
          ],
        },
        {
          userId: "ingrid",
          user: "the bins go out on thursdays",
          assistant: "Got it.",
          category: "durable",
          facts: [
            {
              id: "f2",
              statement: "Bins go out on Thursdays.",
              kind: "constraint",
              scope: "household",
              keyTerms: ["bin", "thursday"],
            },
          ],
        },
        {
          userId: "ingrid",
          user: "no wait, tuesdays",
          assistant: "Tuesdays then.",
          category: "correction",
          facts: [
            {
              id: "f3",
              statement: "Bins go out on Tuesdays.",
              kind: "correction",
              scope: "household",
              keyTerms: ["bin", "tuesday"],
              replaces: "f2",
            },
          ],
        },
      ],
    },
  ],
});

describe("scoring what a conversation left in memory", () => {
  it("tells wanted, stale, duplicated, injected and junk objects apart", () => {
    const score = scoreConversation(conversation, [
      { id: "1", statement: "Leo is allergic to nuts.", sourceTurn: "01-a#1" },
      { id: "2", statement: "Ingrid's son Leo has a nut allergy", sourceTurn: "01-a#1" },
      { id: "3", statement: "The bins go out on Thursdays", sourceTurn: "01-a#2" },
      { id: "4", statement: "Ingrid has allotment plot 14", sourceTurn: "01-a#1" },
      { id: "5", statement: "The user said good morning", sourceTurn: "01-a#0" },
      // The seed is memory the conversation did not write: not scored, unless a turn replaced it.
      { id: "6", statement: "Ingrid's allotment is plot 14.", seedKey: "s1" },
    ]);
    expect(score).toMatchObject({
      stored: 5,
      wanted: 2,
      duplicates: 1,
      stale: 1,
      fromInjected: 1,
      junk: 1,
      currentFacts: 2,
      factsKept: 1,
      junkByCategory: { small_talk: 1 },
      junkStatements: ["The user said good morning"],
    });
    expect(totals([score])).toMatchObject({ junkRate: 0.2, factRecall: 0.5 });
  });

  it("counts a replaced seed still in memory, or restated, as stale", () => {
    const moved = conversationSchema.parse({
      ...conversation,
      sessions: [
        {
          sessionId: "01-b",
          date: "2026-04-01",
          turns: [
            {
              userId: "ingrid",
              user: "we swapped plots, I have plot 9 now",
              assistant: "Plot 9, noted.",
              category: "correction",
              facts: [
                {
                  id: "f1",
                  statement: "Ingrid's allotment is plot 9.",
                  kind: "correction",
                  scope: "user",
                  keyTerms: ["plot 9"],
                  replaces: "s1",
                },
              ],
            },
          ],
        },
      ],
    });
    const score = scoreConversation(moved, [
      { id: "6", statement: "Ingrid's allotment is plot 14.", seedKey: "s1" },
      { id: "7", statement: "Ingrid has allotment plot 14", sourceTurn: "01-b#0" },
      { id: "8", statement: "Ingrid's allotment is now plot 9", sourceTurn: "01-b#0" },
    ]);
    expect(score).toMatchObject({ stored: 2, wanted: 1, stale: 2, fromInjected: 0, junk: 0, factsKept: 1 });
  });

  it("reports an empty memory as no junk and nothing kept", () => {
    expect(totals([scoreConversation(conversation, [])])).toMatchObject({ junkRate: 0, factRecall: 0 });
  });
});
