import { describe, expect, it } from "vitest";
import { goldFacts, loadCorpus } from "./pollution-corpus.js";

describe("the pollution corpus", () => {
  const corpus = loadCorpus();

  it("parses, and every reference names an earlier fact or a seed of its conversation", () => {
    expect(corpus.length).toBeGreaterThanOrEqual(12);
    for (const conversation of corpus) {
      const seeds = new Set(conversation.seedMemory.map((seed) => seed.key));
      const known = new Set(seeds);
      const people = new Set(conversation.people.map((person) => person.userId));
      for (const session of conversation.sessions)
        for (const turn of session.turns) {
          expect(people, `${conversation.id} ${turn.userId}`).toContain(turn.userId);
          for (const key of turn.echoesSeed ?? [])
            expect(seeds, `${conversation.id} echoes ${key}`).toContain(key);
          for (const key of turn.restates ?? [])
            expect(known, `${conversation.id} restates ${key}`).toContain(key);
          for (const fact of turn.facts) {
            if (fact.replaces !== undefined)
              expect(known, `${conversation.id} ${fact.id} replaces ${fact.replaces}`).toContain(
                fact.replaces,
              );
            expect(known, `${conversation.id} ${fact.id} twice`).not.toContain(fact.id);
            known.add(fact.id);
            // A key term the fact's own statement lacks would make the fact unmatchable.
            for (const term of fact.keyTerms)
              expect(fact.statement.toLowerCase()).toContain(term.toLowerCase());
          }
        }
    }
  });

  it("is long and mostly not worth remembering, as real conversations are", () => {
    const turns = corpus.flatMap((conversation) => conversation.sessions.flatMap((session) => session.turns));
    expect(turns.length).toBeGreaterThanOrEqual(450);
    const withFacts = turns.filter((turn) => turn.facts.length > 0).length;
    expect(withFacts / turns.length).toBeLessThan(0.4);
    expect(corpus.flatMap(goldFacts).length).toBeGreaterThanOrEqual(100);
  });
});
