import { describe, expect, it } from "vitest";
import { dashboardOption, legendOf } from "./dashboard-picture.js";

describe("a dashboard drawn from query results", () => {
  const series = {
    metric: { reason: "timeout", job: "cortex" },
    values: [[1_800_000_000, "0.5"]] as [number, string][],
  };

  it("names a series by the panel's legend format, or by its labels", () => {
    expect(legendOf(series, "{{reason}}")).toBe("timeout");
    expect(legendOf(series, undefined)).toBe("reason=timeout, job=cortex");
    expect(legendOf({ metric: {}, values: [] }, "")).toBe("value");
  });

  it("puts each panel where its gridPos says, with its series, and marks a panel without data", () => {
    const option = dashboardOption(
      {
        title: "Remram knowledge",
        panels: [
          {
            title: "A",
            gridPos: { x: 0, y: 0, w: 12, h: 8 },
            targets: [{ expr: "a", legendFormat: "{{reason}}" }],
          },
          { title: "B", gridPos: { x: 12, y: 0, w: 12, h: 8 }, targets: [{ expr: "b" }] },
        ],
      },
      [[[series]], [[]]],
    );
    const grids = option.grid as { left: number; top: number }[];
    expect(grids).toHaveLength(2);
    expect(grids[1]?.left).toBeGreaterThan(grids[0]?.left ?? 0);
    expect(option.series).toEqual([
      expect.objectContaining({ name: "timeout", xAxisIndex: 0, data: [[1_800_000_000_000, 0.5]] }),
    ]);
    expect(option.legend).toEqual([expect.objectContaining({ data: ["timeout"] })]);
    const titles = (option.title as { text: string }[]).map((title) => title.text);
    expect(titles).toEqual(["Remram knowledge", "A", "B", "no data in this run"]);
  });
});
