import { describe, expect, it } from "vitest";
import { type ReflectionDelta, ReflectionDeltaSchema, type ReflectionJob } from "./reflection.js";
import { reflectionToCortex } from "./reflection-cortex.js";

const job: ReflectionJob = {
  jobId: "j1",
  runId: "run-7",
  principal: { userId: "alice", householdId: "h1", agentId: "main" },
  sessionKey: "agent:main:direct:alice",
  interaction: "User: x",
  targets: [
    { id: "k-tea", statement: "Alice takes tea", type: "preference", scope: "user", privacy: "private" },
    { id: "k-bins", statement: "Bins go out on Tuesdays", type: "constraint", scope: "household" },
  ],
  createdAt: "2026-11-22T10:00:00.000Z",
};
const user = { kind: "user", ownerIds: ["alice"] };
const household = { kind: "household", ownerIds: ["h1"] };
const turn = ["run-7"];

/** The model's reply as parsed (defaults filled). */
function reply(input: Record<string, unknown>): ReflectionDelta {
  return ReflectionDeltaSchema.parse(input);
}

describe("reflectionToCortex", () => {
  it("writes the person's scope, the household's only when the model says so and the session has one", () => {
    const { delta } = reflectionToCortex(
      reply({
        items: [
          { kind: "fact", statement: "Alice cycles to work" },
          { kind: "constraint", statement: "Quiet hours start at ten", scope: "household" },
        ],
      }),
      job,
    );
    expect(delta.items.map((i) => i.scope)).toEqual([user, household]);
    const { householdId: _none, ...alone } = job.principal;
    const single = reflectionToCortex(
      reply({ items: [{ kind: "constraint", statement: "Quiet hours start at ten", scope: "household" }] }),
      { ...job, principal: alone },
    );
    expect(single.delta.items[0]?.scope).toEqual(user);
  });

  it("keeps only what the person said, not the assistant's claims or the model's inventions", () => {
    const turnJob: ReflectionJob = {
      ...job,
      interaction:
        "User: actually the bins go out on Wednesdays now\nAssistant: Noted! And the plumber comes Friday.",
      userText: "actually the bins go out on Wednesdays now",
    };
    const { delta, dropped } = reflectionToCortex(
      reply({
        items: [
          { kind: "constraint", statement: "Bins go out on Wednesdays", updates: "m2" },
          { kind: "fact", statement: "The plumber comes on Friday" },
          { kind: "fact", statement: "Alice's boiler was serviced in May" },
        ],
        candidateDimensions: [
          { name: "chore", value: "bins" },
          { name: "pet", value: "cat named Miso" },
        ],
      }),
      turnJob,
    );
    expect(delta.corrections.map((correction) => correction.replacement?.statement)).toEqual([
      "Bins go out on Wednesdays",
    ]);
    // The assistant's claim and the model's invention are nobody's memory.
    expect(delta.items).toEqual([]);
    expect(delta.candidateDimensions.map((dimension) => dimension.value)).toEqual(["bins"]);
    expect(dropped.ungrounded).toBe(3);
  });

  it("passes the model's claim through and keeps the source turn and session", () => {
    const claim = { subject: "alice", predicate: "commutes by", object: "bike" };
    const { delta } = reflectionToCortex(
      reply({ items: [{ kind: "fact", statement: "Alice cycles to work", claim, confidence: 0.7 }] }),
      job,
    );
    expect(delta).toMatchObject({
      sessionId: "agent:main:direct:alice",
      observedAt: job.createdAt,
      items: [
        { type: "fact", statement: "Alice cycles to work", claim, confidence: 0.7, sourceTurnIds: turn },
      ],
    });
  });

  it("turns an item that updates a memory item into a correction of that id with the item as replacement", () => {
    const { delta } = reflectionToCortex(
      reply({
        items: [
          { kind: "constraint", statement: "Bins go out on Wednesdays now", updates: "m2" },
          { kind: "correction", statement: "Alice no longer takes tea", updates: "m1" },
        ],
      }),
      job,
    );
    expect(delta.items).toEqual([]);
    expect(delta.corrections).toEqual([
      {
        targetId: "k-bins",
        statement: "Bins go out on Tuesdays",
        scope: household,
        sourceTurnIds: turn,
        replacement: {
          type: "constraint",
          statement: "Bins go out on Wednesdays now",
          scope: household,
          sourceTurnIds: turn,
        },
      },
      { targetId: "k-tea", statement: "Alice no longer takes tea", scope: user, sourceTurnIds: turn },
    ]);
  });

  it("maps adjustments to ids with a default reason; drops unknown handles and adjustments of what it corrects", () => {
    const { delta, dropped } = reflectionToCortex(
      reply({
        items: [{ kind: "correction", statement: "Bins are not on Tuesdays", updates: "m2" }],
        adjustments: [
          { target: "m1", effect: "reinforce" },
          { target: "M1", effect: "weaken" },
          { target: "m2", effect: "contradict" },
          { target: "m3", effect: "weaken" },
          { target: "k-tea", effect: "weaken" },
        ],
      }),
      job,
    );
    expect(delta.confidenceAdjustments).toEqual([
      {
        targetId: "k-tea",
        effect: "reinforce",
        reason: "the conversation confirmed it",
        sourceTurnIds: turn,
      },
    ]);
    expect(dropped).toEqual({ injected: 0, unresolved: 2, redundant: 2, ungrounded: 0, notKnowledge: 0 });
  });

  it("never offers a household item to a session without a household", () => {
    const { householdId: _none, ...alone } = job.principal;
    const { delta, dropped } = reflectionToCortex(
      reply({ adjustments: [{ target: "m2", effect: "reinforce" }] }),
      { ...job, principal: alone },
    );
    expect(delta.confidenceAdjustments).toEqual([]);
    expect(dropped.unresolved).toBe(1);
  });

  it("links by handle: memory items by id, the reply's items by their place in the delta", () => {
    const { delta, dropped } = reflectionToCortex(
      reply({
        items: [
          { kind: "correction", statement: "Not the red bike" },
          { kind: "fact", statement: "Alice rides a blue bike" },
          { kind: "constraint", statement: "Bins go out on Wednesdays", updates: "m2" },
        ],
        links: [
          { from: "n2", relation: "supports", to: "m1" },
          { from: "n3", relation: "related", to: "n2" },
          { from: "n1", relation: "related", to: "m1" },
          { from: "n9", relation: "related", to: "m1" },
          { from: "n2", relation: "supports", to: "m1" },
          { from: "m1", relation: "related", to: "m1" },
        ],
      }),
      job,
    );
    expect(delta.links).toEqual([
      { from: { item: 0 }, relation: "supports", to: { id: "k-tea" }, sourceTurnIds: turn },
      { from: { replacement: 1 }, relation: "related", to: { item: 0 }, sourceTurnIds: turn },
    ]);
    // n1 is a correction (no object to link), n9 does not exist; the repeat and the self-link are redundant.
    expect(dropped).toMatchObject({ unresolved: 2, redundant: 2 });
  });

  it("leaves out items that only restate what was shown, as an update too, and a link to one of them", () => {
    const { delta, dropped } = reflectionToCortex(
      reply({
        items: [
          { kind: "preference", statement: "Alice takes tea" },
          { kind: "fact", statement: "Alice bought a kettle" },
          { kind: "preference", statement: "Alice takes tea", updates: "m1" },
          { kind: "correction", statement: "Alice takes tea", updates: "m1" },
        ],
        links: [
          { from: "n2", relation: "supports", to: "n1" },
          { from: "n2", relation: "supports", to: "m1" },
        ],
      }),
      job,
      (statement) => statement === "Alice takes tea",
    );
    expect(delta.items.map((i) => i.statement)).toEqual(["Alice bought a kettle"]);
    // A correction naming its target is kept: its statement only says what was wrong, nothing of it is stored.
    expect(delta.corrections).toEqual([
      { targetId: "k-tea", statement: "Alice takes tea", scope: user, sourceTurnIds: turn },
    ]);
    expect(delta.links).toEqual([
      { from: { item: 0 }, relation: "supports", to: { id: "k-tea" }, sourceTurnIds: turn },
    ]);
    expect(dropped).toEqual({ injected: 2, unresolved: 1, redundant: 0, ungrounded: 0, notKnowledge: 0 });
  });

  it("has nothing to resolve for a job that was shown nothing", () => {
    const { targets: _none, ...bare } = job;
    const { delta, dropped } = reflectionToCortex(
      reply({
        items: [{ kind: "fact", statement: "Alice bought a kettle", updates: "m1" }],
        adjustments: [{ target: "m1", effect: "reinforce" }],
      }),
      bare,
    );
    expect(delta.items).toHaveLength(1);
    expect(delta.corrections).toEqual([]);
    expect(delta.confidenceAdjustments).toEqual([]);
    expect(dropped.unresolved).toBe(2);
  });
});
