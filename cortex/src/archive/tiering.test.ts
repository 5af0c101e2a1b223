import { describe, expect, it } from "vitest";
import { packBundle, sliceBundle } from "./cold.js";
import { defaultTierRules, idleDays, planTiering, type TierCandidate, tierFor } from "./tiering.js";

const now = "2026-06-30T00:00:00.000Z";
const daysAgo = (days: number) => new Date(Date.parse(now) - days * 86_400_000).toISOString();
const rules = { ...defaultTierRules, warmAfterDays: 30, coldAfterDays: 180 };

function candidate(hash: string, overrides: Partial<TierCandidate> = {}): TierCandidate {
  return {
    hash: hash.repeat(64).slice(0, 64),
    tier: "hot",
    size: 1000,
    archivedAt: daysAgo(0),
    ...overrides,
  };
}

describe("tier rules", () => {
  it("keep a document hot until warmAfterDays idle, warm until coldAfterDays, cold after", () => {
    expect(tierFor(0, rules)).toBe("hot");
    expect(tierFor(29.9, rules)).toBe("hot");
    expect(tierFor(30, rules)).toBe("warm");
    expect(tierFor(179, rules)).toBe("warm");
    expect(tierFor(180, rules)).toBe("cold");
  });

  it("count idleness from the later of archiving and the last recall, never below zero", () => {
    expect(idleDays({ archivedAt: daysAgo(100) }, now)).toBeCloseTo(100);
    expect(idleDays({ archivedAt: daysAgo(100), lastAccessedAt: daysAgo(3) }, now)).toBeCloseTo(3);
    expect(idleDays({ archivedAt: daysAgo(5), lastAccessedAt: daysAgo(50) }, now)).toBeCloseTo(5);
    expect(idleDays({ archivedAt: "2027-01-01T00:00:00.000Z" }, now)).toBe(0);
    expect(idleDays({ archivedAt: "not a time" }, now)).toBe(0);
  });

  it("plan moves only downwards: a recalled document stays where it is, a cold one never moves up", () => {
    const plan = planTiering(
      [
        candidate("1", { archivedAt: daysAgo(40) }),
        candidate("2", { archivedAt: daysAgo(200) }),
        candidate("3", { archivedAt: daysAgo(200), lastAccessedAt: daysAgo(1) }),
        candidate("4", { tier: "warm", archivedAt: daysAgo(40) }),
        candidate("5", { tier: "cold", archivedAt: daysAgo(1) }),
        candidate("6", { tier: "warm", archivedAt: daysAgo(365) }),
      ],
      rules,
      now,
    );
    expect(plan.toWarm).toEqual([candidate("1").hash]);
    expect(plan.toCold).toEqual([[candidate("2").hash, candidate("6").hash]]);
  });

  it("pack cold documents into bundles bounded by count and bytes, in hash order", () => {
    const old = daysAgo(400);
    const many = ["9", "1", "5", "3", "7"].map((hash) => candidate(hash, { archivedAt: old }));
    expect(planTiering(many, { ...rules, bundleMaxDocuments: 2 }, now).toCold).toEqual([
      [candidate("1").hash, candidate("3").hash],
      [candidate("5").hash, candidate("7").hash],
      [candidate("9").hash],
    ]);
    const big = [
      candidate("a", { archivedAt: old, size: 600 }),
      candidate("b", { archivedAt: old, size: 600 }),
      candidate("c", { archivedAt: old, size: 5000 }),
    ];
    // One document larger than the bound still gets a bundle, alone.
    expect(planTiering(big, { ...rules, bundleMaxBytes: 1000 }, now).toCold).toEqual([
      [candidate("a").hash],
      [candidate("b").hash],
      [candidate("c").hash],
    ]);
  });
});

describe("cold bundles", () => {
  it("lay members end to end and give each one's slice back exactly", () => {
    const members = ["first", "second member", ""].map((text, i) => ({
      hash: String(i).repeat(64),
      compressed: Buffer.from(text),
      size: text.length * 2,
    }));
    const { bytes, slices } = packBundle(members);
    expect(bytes.toString()).toBe("firstsecond member");
    expect(slices).toEqual([
      { hash: "0".repeat(64), offset: 0, length: 5, size: 10 },
      { hash: "1".repeat(64), offset: 5, length: 13, size: 26 },
      { hash: "2".repeat(64), offset: 18, length: 0, size: 0 },
    ]);
    expect(slices.map((slice) => sliceBundle(bytes, slice).toString())).toEqual([
      "first",
      "second member",
      "",
    ]);
  });

  it("refuse a slice outside the bundle (a cut or tampered file)", () => {
    expect(() => sliceBundle(Buffer.from("short"), { offset: 3, length: 10 })).toThrow(RangeError);
    expect(() => sliceBundle(Buffer.from("short"), { offset: -1, length: 1 })).toThrow(RangeError);
  });
});
