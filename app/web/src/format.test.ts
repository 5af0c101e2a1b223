import { describe, expect, it } from "vitest";
import {
  bytes,
  countEntries,
  countsSentence,
  duration,
  formatDate,
  humanize,
  percent,
  relativeTime,
  shortId,
} from "./format.js";

describe("formatDate", () => {
  it("writes a timestamp in the given locale and zone", () => {
    expect(formatDate("2026-05-03T14:05:00Z", { locale: "en-GB", timeZone: "UTC" })).toBe(
      "3 May 2026, 14:05",
    );
    expect(formatDate("2026-05-03T14:05:00+02:00", { locale: "en-GB", timeZone: "UTC" })).toBe(
      "3 May 2026, 12:05",
    );
  });

  it("says unknown for a missing or unreadable time", () => {
    expect(formatDate(undefined)).toBe("unknown");
    expect(formatDate(null)).toBe("unknown");
    expect(formatDate("yesterday-ish")).toBe("unknown");
  });
});

describe("relativeTime", () => {
  const now = new Date("2026-05-03T12:00:00Z");

  it("names the largest whole unit, past or future", () => {
    expect(relativeTime("2026-05-03T11:55:00Z", now, "en")).toBe("5 minutes ago");
    expect(relativeTime("2026-05-03T15:00:00Z", now, "en")).toBe("in 3 hours");
    expect(relativeTime("2026-05-02T12:00:00Z", now, "en")).toBe("yesterday");
    expect(relativeTime("2026-04-19T12:00:00Z", now, "en")).toBe("2 weeks ago");
    expect(relativeTime("2026-05-03T12:00:00Z", now, "en")).toBe("now");
  });

  it("says unknown for a missing time", () => {
    expect(relativeTime(undefined, now, "en")).toBe("unknown");
  });
});

describe("numbers", () => {
  it("writes a confidence as a whole percentage, clamped", () => {
    expect(percent(0.8, "en")).toBe("80%");
    expect(percent(0.333, "en")).toBe("33%");
    expect(percent(1.2, "en")).toBe("100%");
    expect(percent(undefined)).toBe("unknown");
    expect(percent(Number.NaN)).toBe("unknown");
  });

  it("writes durations and sizes", () => {
    expect(duration(250)).toBe("250 ms");
    expect(duration(1234)).toBe("1.2 s");
    expect(duration(185_000)).toBe("3 min 5 s");
    expect(duration(120_000)).toBe("2 min");
    expect(duration(-1)).toBe("unknown");
    expect(bytes(512)).toBe("512 B");
    expect(bytes(1536)).toBe("1.5 KiB");
    expect(bytes(3 * 1024 ** 3)).toBe("3.0 GiB");
  });

  it("shortens long identifiers only", () => {
    expect(shortId("abc")).toBe("abc");
    expect(shortId("0123456789abcdef", 8)).toBe("01234567…");
  });
});

describe("humanize", () => {
  it("turns keys into words, acronyms kept", () => {
    expect(humanize("knowledgeDeleted")).toBe("Knowledge deleted");
    expect(humanize("GPUAvailable")).toBe("GPU available");
    expect(humanize("ModelsReady")).toBe("Models ready");
    expect(humanize("dream_cycle")).toBe("Dream cycle");
    expect(humanize("telegram")).toBe("Telegram");
  });
});

describe("counts", () => {
  const erasure = {
    auditId: "a-1",
    erasedAt: "2026-05-03T12:00:00Z",
    knowledgeDeleted: 3,
    chunksDeleted: 5,
    archiveErased: 1,
    counts: {
      knowledgeDeleted: 3,
      vectorsDeleted: 3,
      chunksDeleted: 5,
      archiveErased: 1,
      gitCommitsRewritten: 0,
    },
    durationMs: 420,
  };

  it("flattens nested counts and keeps a repeated key once", () => {
    expect(countEntries(erasure)).toEqual([
      ["knowledgeDeleted", 3],
      ["chunksDeleted", 5],
      ["archiveErased", 1],
      ["vectorsDeleted", 3],
      ["gitCommitsRewritten", 0],
      ["durationMs", 420],
    ]);
  });

  it("says what a forget did in one sentence, zeros and timings left out", () => {
    expect(countsSentence({ forgotten: 1, durationMs: 12 })).toBe("Forgotten: 1");
    expect(countsSentence({ knowledgeDeleted: 1, chunksDeleted: 2 })).toBe(
      "Knowledge deleted: 1, chunks deleted: 2",
    );
    expect(
      countsSentence({
        forgotten: 1,
        alreadyForgotten: 0,
        counts: { knowledgeDeleted: 1, linksRemoved: 0 },
        durationMs: 9,
      }),
    ).toBe("Forgotten: 1, knowledge deleted: 1");
    expect(countsSentence({ ok: true })).toBe("");
  });
});
