import { describe, expect, it } from "vitest";
import { type ChatModel, type ChatOptions, ModelUnavailableError } from "../store/chat-model.js";
import { wordPrinciples } from "./principle-wording.js";
import type { PrincipleDraft } from "./wording.js";

/** A model that answers from a script, one reply (or failure) per call, and records what it was asked. */
function scripted(replies: (string | Error)[]): ChatModel & { calls: ChatOptions[] } {
  const calls: ChatOptions[] = [];
  return {
    model: "scripted",
    calls,
    async completeJson(_messages, _schema, options) {
      calls.push(options);
      const next = replies.shift();
      if (next === undefined) throw new Error("the script ran out");
      if (next instanceof Error) throw next;
      return next;
    },
  };
}

const draft = (id: string): PrincipleDraft => ({
  id,
  types: ["constraint"],
  statements: ["Never deploy the household services on Fridays"],
});
const good = JSON.stringify({ statement: "Household services are never deployed on Fridays" });
const bad = JSON.stringify({ statement: "Observations, all of the same kind (constraint):" });
const settings = { deadline: Number.POSITIVE_INFINITY, maxPrinciples: 16 };

describe("wording principles with the reflection model", () => {
  it("takes a good first reply, greedy, and counts it as worded", async () => {
    const model = scripted([good]);
    const outcomes: string[] = [];
    const result = await wordPrinciples(model, [draft("p1")], new Map(), {
      ...settings,
      observe: (o) => outcomes.push(o),
    });
    expect(result.wordings.get("p1")).toBe("Household services are never deployed on Fridays");
    expect([...result.worded]).toEqual(["p1"]);
    expect(model.calls).toEqual([{ temperature: 0, maxTokens: 120 }]);
    expect(outcomes).toEqual(["worded"]);
  });

  it("asks once more, with temperature and a fixed seed, after a refused reply; twice refused defers it", async () => {
    const retried = scripted([bad, good]);
    expect((await wordPrinciples(retried, [draft("p1")], new Map(), settings)).worded.has("p1")).toBe(true);
    expect(retried.calls[1]).toMatchObject({ temperature: 0.6, seed: 7 });

    const refused = await wordPrinciples(scripted([bad, "not json"]), [draft("p1")], new Map(), settings);
    expect(refused.wordings.size).toBe(0);
    expect(refused.deferred.get("p1")).toBe("reply refused twice: reply is not JSON");
  });

  it("stops asking once the model is unreachable and defers the rest with that reason", async () => {
    const model = scripted([new ModelUnavailableError("reflection model m: fetch failed"), good]);
    const result = await wordPrinciples(model, [draft("p1"), draft("p2")], new Map(), settings);
    expect(model.calls).toHaveLength(1);
    expect([...result.deferred]).toEqual([
      ["p1", "reflection model unavailable: reflection model m: fetch failed"],
      ["p2", "reflection model unavailable: reflection model m: fetch failed"],
    ]);
  });

  it("keeps a revived principle's own wording without asking, and respects the per-cycle bounds", async () => {
    const model = scripted([good, good]);
    const known = new Map([["p0", "The children go to bed at eight"]]);
    const drafts = [draft("p0"), draft("p1"), draft("p2")];
    const result = await wordPrinciples(model, drafts, known, { ...settings, maxPrinciples: 1 });
    expect(result.wordings.get("p0")).toBe("The children go to bed at eight");
    expect([...result.worded]).toEqual(["p1"]);
    expect(result.deferred.get("p2")).toBe("this cycle's 1 wordings were used");

    let clock = 0;
    const timed = await wordPrinciples(
      scripted([good, good]),
      [draft("p1"), draft("p2")],
      new Map(),
      { ...settings, deadline: 10 },
      () => (clock += 6),
    );
    expect([...timed.worded]).toEqual(["p1"]);
    expect(timed.deferred.get("p2")).toBe("this cycle's wording time was used");
  });
});
