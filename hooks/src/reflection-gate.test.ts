import { describe, expect, it } from "vitest";
import { contentStems, isGrounded, itemDropReason, reflectionSkipReason } from "./reflection-gate.js";

describe("which turns are worth a reflection run", () => {
  it.each([
    ["morning! 😊", "small_talk"],
    ["thanks so much!!", "small_talk"],
    ["ok cool. lol", "small_talk"],
    ["👍👍", "small_talk"],
    ["   ", "empty"],
    ["What's the weather like in Bergen tomorrow?", "question"],
    ["how do I get rid of limescale in a kettle?", "question"],
    ["Can you convert 350F to celsius? Thanks!", "question"],
    ["I'm so tired today", "transient"],
    ["im at the shop. back soon", "transient"],
    ["it's raining again, the third day this week", "transient"],
    ["Draft an email to Tom about the leaking tap.", "request"],
    ["heyyy", "small_talk"],
    ["You have been a great help this year.", "small_talk"],
  ])("skips %j (%s)", (text, reason) => {
    expect(reflectionSkipReason(text)).toBe(reason);
  });

  it.each([
    "My son Leo is allergic to nuts.",
    "can you suggest a cake recipe? no nuts, my son Leo is allergic",
    "We decided to get the heat pump installed in March.",
    "The bins go out on Tuesday nights.",
    "no, it's Tuesdays not Thursdays",
    "I'm vegetarian, so nothing with meat please.",
    "I'm always cold in the mornings, keep the heating on till 9",
    "Is it normal that our boiler makes a clicking noise?",
    "I bought a kayak.",
  ])("reflects on %j", (text) => {
    expect(reflectionSkipReason(text)).toBeUndefined();
  });
});

describe("whether the person said what a reflected statement claims", () => {
  const said = (userText: string, context: string[] = []) => ({ userText, context });

  it("keeps a statement in the person's own words, paraphrased or restemmed", () => {
    const turn = said("can you suggest a cake recipe? no nuts, my son Leo is allergic", ["ingrid"]);
    expect(isGrounded("Leo is allergic to nuts.", turn)).toBe(true);
    expect(isGrounded("Ingrid's son Leo has a nut allergy.", turn)).toBe(true);
    expect(isGrounded("The user prefers cake recipes without nuts.", turn)).toBe(true);
  });

  it("drops what came from the assistant, the model or the memory the run was shown", () => {
    // The assistant's reply (its mistake) said the plumber comes on Friday; the person only said thanks.
    expect(isGrounded("The plumber comes on Friday.", said("great, thanks"))).toBe(false);
    // Invention: nothing of it was said.
    expect(isGrounded("Leo plays football on Saturdays.", said("my son Leo is allergic to nuts"))).toBe(
      false,
    );
    // Only the corrected statement's words, nothing new from the person.
    expect(
      isGrounded("The bins go out on Thursday.", said("no that's wrong", ["The bins go out on Thursday."])),
    ).toBe(false);
    expect(isGrounded("What is Leo allergic to?", said("my son Leo is allergic to nuts"))).toBe(false);
  });

  it("lets a correction borrow the words of what it corrects when the new part is the person's", () => {
    expect(
      isGrounded(
        "The bins go out on Tuesday nights.",
        said("no, it's Tuesdays not Thursdays", ["The bins go out on Thursday."]),
      ),
    ).toBe(true);
  });

  it("compares stems, leaves stopwords out and keeps numbers whole", () => {
    expect(contentStems("Ingrid's allotment is plot 14.")).toEqual(["ingrid", "allot", "plot", "14"]);
  });
});

describe("which reflected statements are knowledge at all", () => {
  const turn = { userText: "the onions go in the sunny bed. I'm so tired today. Ha det bra!", context: [] };
  it.each([
    ["Onions", "not_a_statement"],
    ["Thank you so much!", "not_lasting"],
    ["Which bed gets the most sun?", "not_a_statement"],
    ["The user is so tired today.", "not_lasting"],
    ["Ingrid plants the carrots in the shade.", "ungrounded"],
  ])("drops %j (%s)", (statement, reason) => {
    expect(itemDropReason(statement, turn)).toBe(reason);
  });

  it("keeps a grounded statement of something lasting", () => {
    expect(itemDropReason("The onions go in the sunny bed.", turn)).toBeUndefined();
  });
});
