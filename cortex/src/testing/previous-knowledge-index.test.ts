import { describe, expect, it } from "vitest";
import { withPlainEnglish } from "./previous-knowledge-index.js";

describe("withPlainEnglish", () => {
  it("puts every analysed field, nested ones too, back on the english analyzer", () => {
    expect(
      withPlainEnglish({
        statement: { analyzer: "folded_english" },
        claim: { properties: { object: { analyzer: "folded_english" }, subject: {} } },
        id: {},
      }),
    ).toEqual({
      statement: { analyzer: "english" },
      claim: { properties: { object: { analyzer: "english" }, subject: {} } },
      id: {},
    });
  });
});
