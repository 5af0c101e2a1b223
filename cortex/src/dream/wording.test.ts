import { describe, expect, it } from "vitest";
import {
  checkWording,
  contentWords,
  type PrincipleDraft,
  wordingPrompt,
  wordingReplySchema,
} from "./wording.js";

const draft: PrincipleDraft = {
  id: "principle-1",
  types: ["constraint"],
  statements: [
    "Never deploy the household services on Fridays",
    "No deploys of household services on a Friday",
    "Friday is no deploy day for household services",
  ],
};
const reply = (statement: unknown) => JSON.stringify({ statement });
const token = "ghp_abcdefghijklmnopqrstuvwxyz0123";

describe("principle wording checks", () => {
  it("accepts a grounded one-sentence summary, whitespace tidied", () => {
    expect(checkWording(reply("Household services are  never deployed on Fridays."), draft)).toEqual({
      ok: true,
      statement: "Household services are never deployed on Fridays.",
    });
  });

  it("refuses what is not the reply schema: no JSON, another shape, too short, too long", () => {
    expect(checkWording("Household services are never deployed on Fridays", draft)).toMatchObject({
      ok: false,
      reason: "reply is not JSON",
    });
    expect(checkWording(JSON.stringify({ rule: "x" }), draft).ok).toBe(false);
    expect(checkWording(reply("Fridays"), draft).ok).toBe(false);
    expect(checkWording(reply(`${"Never deploy on Fridays. ".repeat(20)}`), draft).ok).toBe(false);
  });

  it("refuses a copied prompt header, an invention, markup and the opposite of the evidence", () => {
    // What SmolLM2-135M answers when it copies the prompt instead of summarising.
    expect(checkWording(reply("Observations, all of the same kind (constraint):"), draft)).toMatchObject({
      ok: false,
      reason: expect.stringContaining("not grounded"),
    });
    expect(checkWording(reply("Demonstrative of the importance of sleep for children"), draft).ok).toBe(
      false,
    );
    expect(checkWording(reply("Never deploy {household} services on Fridays"), draft)).toMatchObject({
      ok: false,
      reason: "wording holds markup or several lines",
    });
    expect(checkWording(reply("Always deploy the household services on Fridays"), draft)).toMatchObject({
      ok: false,
      reason: "wording says the opposite of its evidence",
    });
  });

  it("redacts a credential the model copied from the evidence", () => {
    const withSecret: PrincipleDraft = {
      ...draft,
      statements: [`The deploy token for household services is ${token}`],
    };
    const check = checkWording(reply(`The household services deploy token is ${token}`), withSecret);
    expect(check).toEqual({ ok: true, statement: "The household services deploy token is <TOKEN>" });
  });

  it("compares words with their common endings cut", () => {
    expect([...contentWords("Deployments of the services")]).toEqual(["deploy", "servic"]);
    expect(contentWords("deploys").has("deploy")).toBe(true);
  });
});

describe("the wording request", () => {
  it("shows the model the strongest statements, bounded, and asks for the reply schema", () => {
    const many: PrincipleDraft = {
      ...draft,
      statements: Array.from({ length: 20 }, (_, i) => `statement ${i} ${"x".repeat(i === 0 ? 400 : 1)}`),
    };
    const [system, user] = wordingPrompt(many);
    expect(system?.content).toContain('{"statement": "..."}');
    expect(user?.content.split("\n").filter((line) => line.startsWith("- "))).toHaveLength(12);
    expect(user?.content).toContain("…");
    expect(wordingReplySchema).toMatchObject({
      type: "object",
      properties: { statement: { type: "string", maxLength: 240 } },
      required: ["statement"],
      additionalProperties: false,
    });
  });
});
