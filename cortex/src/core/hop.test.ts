import { describe, expect, it } from "vitest";
import { hopTerms } from "./hop.js";

describe("hopTerms", () => {
  it("follows a name the first hop's item gives and the question lacks", () => {
    expect(hopTerms("What does my sister do for work?", ["My sister Ingrid is visiting next week."])).toEqual(
      ["Ingrid"],
    );
  });

  it("skips speaker labels, common words, names the question has and words that only open sentences", () => {
    const texts = [
      "Caroline: Went to the support group with Melanie yesterday. It was great!",
      "[8 May 2023] Melanie: Thanks, Caroline. Painting with Oscar on Sunday.",
    ];
    expect(hopTerms("What did Caroline do with Melanie?", texts)).toEqual(["Oscar"]);
  });

  it("takes names in the order the items rank them, each once, possessives folded, at most max", () => {
    const texts = ["I met Ana and Bo at Ana's flat.", "Then Cy, Dee and Ed came over to see Bo."];
    expect(hopTerms("Who came?", texts, 4)).toEqual(["Ana", "Bo", "Cy", "Dee"]);
  });

  it("keeps a sentence-initial name that also appears mid-sentence", () => {
    expect(hopTerms("Who is the neighbour?", ["Arne has the plot next to mine. I like Arne."])).toEqual([
      "Arne",
    ]);
  });

  it("reads a possessive question, curly apostrophes, capitals inside words, list items and decomposed accents", () => {
    expect(hopTerms("What is Caroline's job?", ["Caroline’s sister Ingrid called."])).toEqual(["Ingrid"]);
    expect(hopTerms("How are you?", ["Yes, I’m fine and I’ve seen Bo. Don’t worry."])).toEqual(["Bo"]);
    expect(hopTerms("Which phone?", ["She bought an iPhone on eBay from Ana."])).toEqual(["Ana"]);
    expect(hopTerms("What now?", ["- Painting with Bo\n- Went home"])).toEqual(["Bo"]);
    expect(hopTerms("Who is José?", ["I met Jose\u0301 and Ana."])).toEqual(["Ana"]);
  });

  it("strips a speaker label of a few words only, not a sentence that ends in a colon", () => {
    expect(hopTerms("What does she do?", ["Mary Ann: my sister Ingrid said: she is a nurse"])).toEqual([
      "Ingrid",
    ]);
  });

  it("returns nothing when the items name no one new", () => {
    expect(hopTerms("Where is Oslo?", ["We flew to Oslo in June.", "ok thanks"])).toEqual([]);
  });
});
