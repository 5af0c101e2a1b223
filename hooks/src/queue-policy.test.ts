import { describe, expect, it } from "vitest";
import { admitToQueue, backoffDelayMs } from "./queue-policy.js";

describe("admitToQueue", () => {
  it("admits freely below the limit", () => {
    expect(admitToQueue(3, 10, "drop-oldest")).toEqual({ admit: true, evictOldest: 0 });
  });

  it("evicts exactly enough of the oldest to make room under drop-oldest", () => {
    expect(admitToQueue(10, 10, "drop-oldest")).toEqual({ admit: true, evictOldest: 1 });
    expect(admitToQueue(12, 10, "drop-oldest")).toEqual({ admit: true, evictOldest: 3 });
  });

  it("refuses the arriving item under drop-newest", () => {
    expect(admitToQueue(10, 10, "drop-newest")).toEqual({ admit: false });
  });
});

describe("backoffDelayMs", () => {
  it("doubles per consecutive failure up to the cap", () => {
    expect([0, 1, 2, 3, 4, 10].map((failures) => backoffDelayMs(failures, 1000, 5000))).toEqual([
      0, 1000, 2000, 4000, 5000, 5000,
    ]);
  });
});
