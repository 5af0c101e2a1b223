import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { areOpposites } from "./polarity.js";

describe("semantic opposites", () => {
  it.each([
    ["Alice likes coffee", "Alice does not like coffee"],
    ["Alice likes coffee", "Alice dislikes coffee"],
    ["Always use tabs", "Never use tabs"],
    ["The build can run on Fridays", "The build cannot run on Fridays"],
    ["The garage door is locked at night", "The garage door is not locked at night"],
    ["Notifications are enabled", "Notifications are disabled"],
  ])("sees %j and %j as opposites", (a, b) => {
    expect(areOpposites(a, b)).toBe(true);
  });

  it.each([
    ["Alice likes coffee", "Alice likes coffee a lot"],
    ["Alice likes coffee", "Bob does not like tea"],
    ["Alice does not like coffee", "Alice never likes coffee"],
  ])("does not see %j and %j as opposites", (a, b) => {
    expect(areOpposites(a, b)).toBe(false);
  });

  it("is symmetric", () => {
    const sentence = fc.constantFrom(
      "x likes y",
      "x does not like y",
      "x dislikes y",
      "never x",
      "x",
      "y likes x",
    );
    fc.assert(fc.property(sentence, sentence, (a, b) => areOpposites(a, b) === areOpposites(b, a)));
  });
});
