import { dimensionPolicy } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { canonicalJson } from "../core/canonical-json.js";
import { policyHash } from "./dimension-policy.js";
import { UsageTracker } from "./usage.js";

describe("the dimension policy hash", () => {
  it("does not depend on key order", () => {
    expect(canonicalJson({ b: 1, a: { d: [2, { f: 1, e: 0 }], c: null } })).toBe(
      '{"a":{"c":null,"d":[2,{"e":0,"f":1}]},"b":1}',
    );
  });

  it("changes when the policy changes", () => {
    const defaults = dimensionPolicy.parse({});
    const heavierBm25 = dimensionPolicy.parse({ retrievalWeights: { bm25: 2 } });
    expect(policyHash(defaults)).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(policyHash(heavierBm25)).not.toBe(policyHash(defaults));
  });
});

describe("usage counters", () => {
  it("aggregates retrievals and writes them in one flush", async () => {
    const written: [string, number][] = [];
    const tracker = new UsageTracker(
      async (counts) => {
        for (const [id, { count }] of counts) written.push([id, count]);
      },
      60_000,
      () => new Date(0),
      () => {},
    );
    tracker.record("k", ["a", "b"]);
    tracker.record("k", ["a"]);
    await tracker.flush();
    expect(written).toEqual([
      ["a", 2],
      ["b", 1],
    ]);
    expect(tracker.pendingCount()).toBe(0);
  });

  it("keeps the counts of a failed flush for the next one", async () => {
    let fail = true;
    const written: number[] = [];
    const errors: unknown[] = [];
    const tracker = new UsageTracker(
      async (counts) => {
        if (fail) throw new Error("down");
        written.push(counts.get("a")?.count ?? 0);
      },
      60_000,
      () => new Date(0),
      (error) => errors.push(error),
    );
    tracker.record("k", ["a"]);
    await tracker.flush();
    tracker.record("k", ["a"]);
    fail = false;
    await tracker.flush();
    expect(errors).toHaveLength(1);
    expect(written).toEqual([2]);
  });
});
