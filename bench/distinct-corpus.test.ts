import { describe, expect, it } from "vitest";
import { distinctStatements, sentencesOf } from "./distinct-corpus.js";

const address =
  "Fellow-Citizens of the Senate: I greet you. The progress of public credit is witnessed by a considerable rise " +
  "of American stock abroad as well as at home.  The revenues allotted for this purpose have been productive " +
  "beyond the calculations by which they were regulated! Peace reigns. The ship from Boston arrived at three in the " +
  "afternoon?";

describe("the distinct bench corpus", () => {
  it("splits text into sentences of 6 to 40 words, whitespace collapsed", () => {
    expect(sentencesOf(address)).toEqual([
      "Fellow-Citizens of the Senate: I greet you.",
      "The progress of public credit is witnessed by a considerable rise of American stock abroad as well as at home.",
      "The revenues allotted for this purpose have been productive beyond the calculations by which they were regulated!",
      "The ship from Boston arrived at three in the afternoon?",
    ]);
    expect(sentencesOf(`${"word ".repeat(41)}end.`)).toEqual([]);
  });

  it("takes the first statements, then each sentence once, ignoring case, up to the size", () => {
    const first = ["Ana keeps the spare key under the blue flowerpot by the door."];
    const texts = [address, address.toUpperCase()];
    const all = distinctStatements(first, texts, 4);
    expect(all).toHaveLength(4);
    expect(all[0]).toBe(first[0]);
    expect(new Set(all.map((statement) => statement.toLowerCase())).size).toBe(4);
    expect(distinctStatements(first, texts, 2)).toEqual(all.slice(0, 2));
  });

  it("refuses a size the texts cannot fill, saying how many they hold", () => {
    expect(() => distinctStatements([], [address], 10)).toThrow(
      "the distinct corpus holds 4 statements, fewer than the 10 asked for",
    );
  });
});
