import { describe, expect, it } from "vitest";
import { lineLayout, roundUp } from "./plot.js";

describe("roundUp", () => {
  it("takes 1, 2 or 5 times a power of ten at or above the value", () => {
    expect([0.03, 0.7, 1, 1.2, 3, 7, 42, 180, 501].map(roundUp)).toEqual([
      0.05, 1, 1, 2, 5, 10, 50, 200, 1000,
    ]);
    expect(roundUp(0)).toBe(1);
    expect(roundUp(Number.NaN)).toBe(1);
  });
});

describe("lineLayout", () => {
  it("spreads the points over the width, zero at the bottom and the rounded maximum at the top", () => {
    const layout = lineLayout([{ name: "p95", values: [0, 40, 20] }], { width: 100, height: 50 });
    expect(layout.top).toBe(50);
    expect(layout.paths).toEqual([{ name: "p95", d: "M0.0 50.0 h0 L50.0 10.0 L100.0 30.0" }]);
  });

  it("breaks a line where a value is missing and shares one scale between lines", () => {
    const layout = lineLayout(
      [
        { name: "p50", values: [1, null, 2, 3] },
        { name: "p95", values: [4, null, null, 10] },
      ],
      { width: 30, height: 10 },
    );
    expect(layout.top).toBe(10);
    expect(layout.paths[0]?.d).toBe("M0.0 9.0 h0 M20.0 8.0 h0 L30.0 7.0");
    expect(layout.paths[1]?.d).toBe("M0.0 6.0 h0 M30.0 0.0 h0");
  });

  it("draws nothing for a line without values", () => {
    expect(lineLayout([{ name: "none", values: [null, null] }]).paths[0]?.d).toBe("");
    expect(lineLayout([]).paths).toEqual([]);
  });
});
