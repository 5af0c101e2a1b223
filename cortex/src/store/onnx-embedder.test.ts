import { describe, expect, it } from "vitest";
import { poolTokens, textForTokens, truncateIds } from "./onnx-embedder.js";
import { QueryVectorCache } from "./query-vector-cache.js";

describe("the in-process embedder's pure parts", () => {
  it("keeps the closing special token when it cuts a text's ids to the model's limit", () => {
    expect(truncateIds([101, 7, 8, 9, 10, 102], 4)).toEqual([101, 7, 8, 102]);
    expect(truncateIds([101, 7, 102], 4)).toEqual([101, 7, 102]);
  });

  it("cuts a long text at a space before tokenizing it, and leaves a short one whole", () => {
    const words = Array.from({ length: 2_000 }, (_, i) => `word${i}`).join(" ");
    const cut = textForTokens(words, 16);
    expect(cut.length).toBeLessThanOrEqual(16 * 12);
    expect(words.startsWith(cut)).toBe(true);
    expect(cut.endsWith(" ")).toBe(false);
    expect(words.charAt(cut.length)).toBe(" ");
    expect(textForTokens("short", 16)).toBe("short");
  });

  it("pools a text's own token states into a unit vector: their mean, or the first token's", () => {
    // 3 tokens, 2 dimensions.
    expect(poolTokens([1, 0, 3, 0, 2, 0], 3, 2, "mean")).toEqual([1, 0]);
    const [x, y] = poolTokens([0, 2, 0, 4, 0, 6], 3, 2, "mean");
    expect(x).toBe(0);
    expect(y).toBeCloseTo(1, 12);
    const [first, second] = poolTokens([3, 4, 100, 100], 2, 2, "cls");
    expect(first).toBeCloseTo(0.6, 12);
    expect(second).toBeCloseTo(0.8, 12);
  });

  it("keeps the most recently used query vectors", () => {
    const cache = new QueryVectorCache(2);
    cache.set("a", [1]);
    cache.set("b", [2]);
    expect(cache.get("a")).toEqual([1]);
    cache.set("c", [3]);
    expect(cache.get("b")).toBeUndefined();
    expect(cache.get("a")).toEqual([1]);
    expect(cache.get("c")).toEqual([3]);
  });
});
