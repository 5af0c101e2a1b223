import type { EmbeddingStatus } from "@remram/contract";
import { describe, expect, it } from "vitest";
import {
  type EmbeddingsStatus,
  embeddingsCondition,
  embeddingsPollMs,
  embeddingsStatus,
  movingPollMs,
  settledPollMs,
} from "./embedding-watch.js";
import { watchHarness } from "./testing/cortex-watch.js";

const reembedding: EmbeddingStatus = {
  model: "nomic-embed-text",
  dimensions: 768,
  state: "reembedding",
  replacing: { model: "all-minilm", dimensions: 384 },
  startedAt: "2026-11-28T10:00:00.000Z",
  objects: { done: 4_000, total: 10_000 },
  chunks: { done: 0, total: 2_000 },
};
const current: EmbeddingStatus = {
  model: "nomic-embed-text",
  dimensions: 768,
  state: "current",
  objects: { done: 10_000, total: 10_000 },
  chunks: { done: 2_000, total: 2_000 },
};

const wanted = { model: "nomic-embed-text", dimensions: 768 };

const harness = () =>
  watchHarness(embeddingsStatus, (last: EmbeddingsStatus | undefined) => embeddingsPollMs(last, wanted));

describe("the re-embedding a model change sets off, as status and a condition, read by a CortexWatch", () => {
  it("sums objects and chunks and names the model replaced", () => {
    expect(embeddingsStatus(reembedding)).toEqual({
      model: "nomic-embed-text",
      dimensions: 768,
      state: "reembedding",
      replacing: "all-minilm (384 dimensions)",
      done: 4_000,
      total: 12_000,
    });
    expect(embeddingsStatus({ ...current, model: null, state: "none" })).not.toHaveProperty("model");
  });

  it("is False with the progress and why it pauses, True once current, Unknown before Cortex answered", () => {
    const paused = embeddingsCondition(
      embeddingsStatus({
        ...reembedding,
        waiting: 'model "nomic-embed-text" not found, try pulling it first',
      }),
    );
    expect(paused).toMatchObject({ type: "EmbeddingsCurrent", status: "False", reason: "Reembedding" });
    expect(paused.message).toBe(
      're-embedding with nomic-embed-text (768 dimensions) instead of all-minilm (384 dimensions): 4000 of 12000 (33%); what is not re-embedded yet is found by its words only; paused: model "nomic-embed-text" not found, try pulling it first',
    );
    expect(embeddingsCondition(embeddingsStatus(current))).toMatchObject({
      status: "True",
      reason: "EmbeddingsCurrent",
      message: "every stored object and chunk has its vector of nomic-embed-text (768 dimensions)",
    });
    expect(embeddingsCondition(undefined)).toMatchObject({ status: "Unknown", reason: "NotCheckedYet" });
  });

  it("asks every 15 s while a re-embedding runs and hourly once it is done; never while Cortex is down", async () => {
    const t = harness();
    expect(t.observe(undefined, false)).not.toHaveProperty("nextInMs");
    expect(t.asked()).toBe(0);

    t.answers.push(reembedding);
    const first = t.observe(undefined);
    expect(embeddingsCondition(first.status).status).toBe("Unknown");
    expect(first).not.toHaveProperty("nextInMs");
    await t.flush();
    expect(t.settled).toEqual(["ns/home"]);
    const moving = t.observe(undefined);
    expect(moving.status?.state).toBe("reembedding");
    expect(moving.nextInMs).toBe(movingPollMs);
    expect(t.asked()).toBe(1);

    t.advance(movingPollMs);
    t.answers.push(current);
    t.observe(undefined);
    await t.flush();
    const done = t.observe(undefined);
    expect(embeddingsCondition(done.status).status).toBe("True");
    expect(done.nextInMs).toBe(settledPollMs);
    expect(t.asked()).toBe(2);
  });

  it("asks every 15 s while Cortex still reports another model than the spec gives it", async () => {
    const t = harness();
    t.answers.push({ ...current, model: "all-minilm", dimensions: 384 });
    t.observe(undefined);
    await t.flush();
    const stale = t.observe(undefined);
    expect(embeddingsCondition(stale.status).status).toBe("True");
    expect(stale.nextInMs).toBe(movingPollMs);
  });

  it("keeps what status said while Cortex cannot be asked", async () => {
    const t = harness();
    const previous = embeddingsStatus(reembedding);
    t.observe(previous);
    await t.flush();
    const held = t.observe(previous);
    expect(held.status).toEqual(previous);
    expect(embeddingsCondition(held.status).reason).toBe("Reembedding");
  });
});
