import { describe, expect, it } from "vitest";
import {
  applyPullEvent,
  describePull,
  formatBytes,
  initialPullState,
  type PullEvent,
  type PullProgress,
  pullingMessage,
  pullProgress,
  shouldPublish,
} from "./pull-progress.js";

const weights = "sha256:b179c9523d0e6a0f98a330c7562b682750a6f8c8c15e5bc70ea373728110db53";
const template = "sha256:1e2d2b8a5c6e0b4f3c7a9d8e6f5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d9e8f7a";
const config = "sha256:9f8e7d6c5b4a39281706f5e4d3c2b1a0f9e8d7c6b5a4938271605f4e3d2c1b0a";

const fold = (events: readonly PullEvent[]) => pullProgress(events.reduce(applyPullEvent, initialPullState));

describe("pull progress from Ollama's stream", () => {
  it("starts with no bytes and Ollama's first status line", () => {
    expect(fold([])).toEqual({ status: "starting", completedBytes: 0, totalBytes: 0, percent: 0 });
    expect(fold([{ status: "pulling manifest" }])).toEqual({
      status: "pulling manifest",
      completedBytes: 0,
      totalBytes: 0,
      percent: 0,
    });
  });

  it("adds up the layers announced so far, each at its latest count", () => {
    const progress = fold([
      { status: "pulling manifest" },
      { status: "pulling b179c9523d0e", digest: weights, total: 430_000_000, completed: 0 },
      { status: "pulling b179c9523d0e", digest: weights, total: 430_000_000, completed: 100_000_000 },
      { status: "pulling b179c9523d0e", digest: weights, total: 430_000_000, completed: 430_000_000 },
      { status: "pulling 1e2d2b8a5c6e", digest: template, total: 1_000, completed: 500 },
    ]);
    expect(progress).toEqual({
      status: "downloading",
      completedBytes: 430_000_500,
      totalBytes: 430_001_000,
      percent: 99,
    });
  });

  it("floors the percentage: 100 only once every byte is there", () => {
    const almost = fold([{ status: "pulling x", digest: weights, total: 1_000, completed: 999 }]);
    expect(almost.percent).toBe(99);
    const done = fold([
      { status: "pulling x", digest: weights, total: 1_000, completed: 1_000 },
      { status: "pulling y", digest: config, total: 485, completed: 485 },
      { status: "verifying sha256 digest" },
    ]);
    expect(done).toEqual({
      status: "verifying sha256 digest",
      completedBytes: 1_485,
      totalBytes: 1_485,
      percent: 100,
    });
  });

  it("counts a resumed layer from the bytes Ollama kept, and follows a count that goes back", () => {
    const resumed = fold([
      { status: "pulling manifest" },
      { status: "pulling b179c9523d0e", digest: weights, total: 45_949_440, completed: 13_303_808 },
    ]);
    expect(resumed.percent).toBe(28);
    // Ollama rolls a failed part's bytes back before retrying it.
    const rolledBack = fold([
      { status: "pulling b179c9523d0e", digest: weights, total: 1_000, completed: 800 },
      { status: "pulling b179c9523d0e", digest: weights, total: 1_000, completed: 300 },
    ]);
    expect(rolledBack.completedBytes).toBe(300);
  });

  it("never counts more than a layer's total, nor negative numbers", () => {
    expect(fold([{ status: "pulling x", digest: weights, total: 10, completed: 12 }])).toMatchObject({
      completedBytes: 10,
      percent: 100,
    });
    expect(fold([{ status: "pulling x", digest: weights, total: -1, completed: -5 }])).toMatchObject({
      completedBytes: 0,
      totalBytes: 0,
      percent: 0,
    });
  });

  it("leaves the state it was given as it was", () => {
    const before = applyPullEvent(initialPullState, {
      status: "pulling x",
      digest: weights,
      total: 10,
      completed: 1,
    });
    applyPullEvent(before, { status: "pulling x", digest: weights, total: 10, completed: 9 });
    expect(pullProgress(before).completedBytes).toBe(1);
  });
});

describe("shouldPublish", () => {
  const at = (status: string, completedBytes: number, totalBytes = 1_000): PullProgress => ({
    status,
    completedBytes,
    totalBytes,
    percent: totalBytes > 0 ? Math.floor((completedBytes * 100) / totalBytes) : 0,
  });

  it("publishes the first figure and every phase change at once", () => {
    expect(shouldPublish(undefined, at("pulling manifest", 0, 0), 0, 5_000)).toBe(true);
    expect(shouldPublish(at("pulling manifest", 0, 0), at("downloading", 0), 10, 5_000)).toBe(true);
    expect(shouldPublish(at("downloading", 1_000), at("verifying sha256 digest", 1_000), 10, 5_000)).toBe(
      true,
    );
  });

  it("publishes new byte counts only once the interval has passed", () => {
    expect(shouldPublish(at("downloading", 100), at("downloading", 200), 4_999, 5_000)).toBe(false);
    expect(shouldPublish(at("downloading", 100), at("downloading", 200), 5_000, 5_000)).toBe(true);
    // A new layer's total is news too, on the same clock.
    expect(shouldPublish(at("downloading", 100), at("downloading", 100, 2_000), 5_000, 5_000)).toBe(true);
  });

  it("does not republish an unchanged figure, however long ago the last one was", () => {
    expect(shouldPublish(at("downloading", 100), at("downloading", 100), 60_000, 5_000)).toBe(false);
  });
});

describe("messages", () => {
  it.each([
    [0, "0 B"],
    [999, "999 B"],
    [1_000, "1.0 KB"],
    [45_949_440, "45 MB"],
    [180_000_000, "180 MB"],
    [430_000_000, "430 MB"],
    [4_300_000_000, "4.3 GB"],
    [19_999_999_999, "19 GB"],
  ])("%i bytes read %s", (bytes, text) => {
    expect(formatBytes(bytes)).toBe(text);
  });

  it("word one model's pull by its phase", () => {
    expect(describePull("embed-model", undefined)).toBe("embed-model");
    expect(
      describePull("embed-model", {
        status: "pulling manifest",
        completedBytes: 0,
        totalBytes: 0,
        percent: 0,
      }),
    ).toBe("embed-model: pulling manifest");
    expect(
      describePull("embed-model", {
        status: "downloading",
        completedBytes: 180_000_000,
        totalBytes: 430_000_000,
        percent: 41,
      }),
    ).toBe("embed-model 41% (180 MB of 430 MB)");
    expect(
      describePull("embed-model", {
        status: "verifying sha256 digest",
        completedBytes: 430_000_000,
        totalBytes: 430_000_000,
        percent: 100,
      }),
    ).toBe("embed-model 100% (430 MB of 430 MB), verifying sha256 digest");
  });

  it("word the ModelsReady message for every pulling model", () => {
    const progress = new Map<string, PullProgress>([
      [
        "embed-model",
        { status: "downloading", completedBytes: 180_000_000, totalBytes: 430_000_000, percent: 41 },
      ],
      ["qwen3:8b", { status: "pulling manifest", completedBytes: 0, totalBytes: 0, percent: 0 }],
    ]);
    expect(pullingMessage(["embed-model"], progress)).toBe("pulling embed-model 41% (180 MB of 430 MB)");
    expect(pullingMessage(["embed-model", "qwen3:8b", "other"], progress)).toBe(
      "pulling embed-model 41% (180 MB of 430 MB); qwen3:8b: pulling manifest; other",
    );
    expect(pullingMessage(["other"], undefined)).toBe("pulling other");
  });
});
