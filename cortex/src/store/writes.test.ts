import { describe, expect, it } from "vitest";
import { byteBoundedBatches, maxBulkBytes } from "./writes.js";

describe("byteBoundedBatches (bulk requests under OpenSearch's indexing pressure limit)", () => {
  const size = (n: number) => n;

  it("keeps the order and puts every item in exactly one batch", () => {
    const items = [3, 4, 2, 5, 1, 6];
    const batches = byteBoundedBatches(items, size, 7);
    expect(batches.flat()).toEqual(items);
    expect(batches).toEqual([
      [3, 4],
      [2, 5],
      [1, 6],
    ]);
  });

  it("never exceeds the limit except with one item larger than it, alone in its batch", () => {
    expect(byteBoundedBatches([2, 10, 2], size, 5)).toEqual([[2], [10], [2]]);
  });

  it("makes one batch when everything fits, none for nothing", () => {
    expect(byteBoundedBatches([1, 2, 3], size, 100)).toEqual([[1, 2, 3]]);
    expect(byteBoundedBatches([], size, 100)).toEqual([]);
  });

  it("splits the largest ingest the contract allows into requests well under a 512 MiB heap's 51 MiB limit", () => {
    // 80 documents of 200,000 characters become about 54 MiB of chunk documents (L0, L1 sections, L2 passages).
    const chunks = Array.from({ length: 80 * 60 }, () => 11_800);
    const batches = byteBoundedBatches(chunks, size, maxBulkBytes);
    expect(batches.length).toBeGreaterThan(6);
    for (const batch of batches) expect(batch.reduce((a, b) => a + b, 0)).toBeLessThanOrEqual(maxBulkBytes);
  });
});
