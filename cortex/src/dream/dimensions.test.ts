import { describe, expect, it } from "vitest";
import { selectDimensionPromotions } from "./dimensions.js";

describe("candidate dimension promotion", () => {
  const candidate = (name: string, occurrences: number, meanConfidence: number) => ({
    name,
    occurrences,
    meanConfidence,
    values: ["b", "a", "a"],
  });

  it("promotes a candidate at both thresholds exactly", () => {
    expect(selectDimensionPromotions([candidate("garden_zone", 3, 0.7)], [])).toEqual([
      { name: "garden_zone", values: ["a", "b"], occurrences: 3, meanConfidence: 0.7 },
    ]);
  });

  it("keeps candidates below either threshold and those already canonical", () => {
    const result = selectDimensionPromotions(
      [candidate("rare", 2, 0.9), candidate("shaky", 10, 0.69), candidate("project", 10, 0.9)],
      ["project"],
    );
    expect(result).toEqual([]);
  });

  it("reads the thresholds from the DimensionPolicy", () => {
    expect(
      selectDimensionPromotions([candidate("rare", 2, 0.5)], [], { minOccurrences: 2, minConfidence: 0.5 }),
    ).toHaveLength(1);
  });
});
