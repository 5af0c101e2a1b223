import { reflectRequest } from "@remram/contract";
import { describe, expect, it } from "vitest";
import type { ReflectionJob } from "./reflection.js";
import { reflectionReplyAction } from "./reflection-reply.js";

const job: ReflectionJob = {
  jobId: "j1",
  runId: "run-1",
  principal: { userId: "alice", householdId: "h1", agentId: "main" },
  sessionKey: "agent:main:direct:alice",
  interaction: "User: x",
  targets: [{ id: "k-bins", statement: "Bins go out on Tuesdays", type: "constraint", scope: "household" }],
  createdAt: "2026-11-22T10:00:00.000Z",
};
const never = () => false;

describe("reflectionReplyAction", () => {
  it("asks again once for a malformed reply, then drops the job: nothing of it is queued", () => {
    for (const malformed of [
      "I found nothing.",
      '{"items":[{"kind":"fact","statement":"Alice lives in Ber',
      '{"items":[{"kind":"rumour","statement":"x y z"}]}',
      '{"items":[],"adjustments":[{"target":"m1","effect":"boost"}]}',
    ]) {
      const first = reflectionReplyAction({ reply: malformed, job, invalidBefore: 0, isInjected: never });
      expect(first.action, malformed).toBe("retry");
      const second = reflectionReplyAction({ reply: malformed, job, invalidBefore: 1, isInjected: never });
      expect(second.action, malformed).toBe("drop");
    }
  });

  it("queues a valid reply as a delta Cortex accepts, counting each kind it holds", () => {
    const reply = JSON.stringify({
      items: [{ kind: "constraint", statement: "Glass goes out on Tuesdays too", scope: "household" }],
      adjustments: [
        { target: "m1", effect: "reinforce" },
        { target: "m7", effect: "weaken" },
      ],
      links: [{ from: "n1", relation: "refines", to: "m1" }],
      candidateDimensions: [{ name: "Waste", value: "glass" }],
    });
    const next = reflectionReplyAction({ reply, job, invalidBefore: 1, isInjected: never });
    if (next.action !== "queue") throw new Error(`expected a delta, got ${JSON.stringify(next)}`);
    expect(reflectRequest.safeParse({ ...next.request.delta, principal: job.principal }).success).toBe(true);
    expect(next.parts).toEqual({
      item_constraint: 1,
      household_item: 1,
      adjustment_reinforce: 1,
      link_refines: 1,
      candidate_dimension: 1,
      dropped_unresolved: 1,
    });
  });

  it("still takes a reply in the first version's shape (the test bed's few-shot model writes it)", () => {
    const reply = '{"items":[{"kind":"fact","statement":"Ingrid lives in Bergen"}],"candidateDimensions":[]}';
    const next = reflectionReplyAction({ reply, job, invalidBefore: 0, isInjected: never });
    expect(next).toMatchObject({ action: "queue", parts: { item_fact: 1 } });
  });
});
