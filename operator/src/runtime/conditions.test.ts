import { describe, expect, it } from "vitest";
import { mergeConditions, summarizeReady, transitions } from "./conditions.js";

const t0 = "2026-01-01T00:00:00Z";
const t1 = "2026-01-01T00:05:00Z";

describe("condition bookkeeping", () => {
  it("keeps lastTransitionTime while the status stays and moves it when the status flips", () => {
    const first = mergeConditions(
      undefined,
      [{ type: "Ready", status: "False", reason: "Waiting", message: "a" }],
      1,
      t0,
    );
    const same = mergeConditions(
      first,
      [{ type: "Ready", status: "False", reason: "StillWaiting", message: "b" }],
      2,
      t1,
    );
    expect(same[0]).toMatchObject({ lastTransitionTime: t0, reason: "StillWaiting", observedGeneration: 2 });
    const flipped = mergeConditions(
      same,
      [{ type: "Ready", status: "True", reason: "Ready", message: "" }],
      2,
      t1,
    );
    expect(flipped[0]?.lastTransitionTime).toBe(t1);
  });

  it("leaves conditions it was not asked about (an approver's Approved) in place", () => {
    const approved = {
      type: "Approved",
      status: "True" as const,
      reason: "KubectlApprove",
      message: "",
      lastTransitionTime: t0,
    };
    const merged = mergeConditions(
      [approved],
      [{ type: "Ready", status: "Unknown", reason: "Reconciling", message: "" }],
      1,
      t1,
    );
    expect(merged.map((condition) => condition.type)).toEqual(["Ready", "Approved"]);
    expect(merged[1]).toBe(approved);
  });

  it("reports only flips and new conditions as transitions", () => {
    const before = mergeConditions(
      undefined,
      [{ type: "A", status: "True", reason: "R", message: "" }],
      1,
      t0,
    );
    const after = mergeConditions(
      before,
      [
        { type: "A", status: "True", reason: "R2", message: "changed text only" },
        { type: "B", status: "False", reason: "R", message: "" },
      ],
      1,
      t1,
    );
    expect(transitions(before, after).map((condition) => condition.type)).toEqual(["B"]);
  });

  it("summarises Ready from components, naming a failure before something pending", () => {
    const ready = summarizeReady(
      [
        { type: "OllamaReady", status: "Unknown", reason: "Starting", message: "pulling" },
        { type: "CortexReady", status: "False", reason: "CrashLoop", message: "exit 1" },
      ],
      "all good",
    );
    expect(ready).toEqual({
      type: "Ready",
      status: "False",
      reason: "CrashLoop",
      message: "CortexReady: exit 1",
    });
    expect(summarizeReady([], "all good")).toMatchObject({ status: "True", reason: "Ready" });
  });
});
