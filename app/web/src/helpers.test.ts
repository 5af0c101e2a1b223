import { describe, expect, it } from "vitest";
import { knowledgeSearch } from "./api.js";
import { barLayout } from "./plot.js";
import { hrefOf, parseHash } from "./route.js";

describe("parseHash", () => {
  it("maps the hash to a page, my memory by default", () => {
    expect(parseHash("")).toEqual({ page: "memory" });
    expect(parseHash("#/")).toEqual({ page: "memory" });
    expect(parseHash("#/proposals")).toEqual({ page: "proposals" });
    expect(parseHash("#proposals")).toEqual({ page: "proposals" });
    expect(parseHash("#/diagnostics?refresh=1")).toEqual({ page: "diagnostics" });
    expect(parseHash("#/sign-in")).toEqual({ page: "sign-in" });
  });

  it("opens one conversation, and nothing else by id", () => {
    const hash = "a".repeat(64);
    expect(parseHash(`#/conversations/${hash}`)).toEqual({ page: "conversations", id: hash });
    expect(parseHash("#/memory/x")).toEqual({ page: "not-found" });
    expect(parseHash("#/conversations/a/b")).toEqual({ page: "not-found" });
    expect(parseHash("#/nowhere")).toEqual({ page: "not-found" });
    expect(parseHash("#/%E0%A4%A")).toEqual({ page: "not-found" });
  });

  it("round-trips through hrefOf", () => {
    for (const route of [{ page: "memory" as const }, { page: "conversations" as const, id: "f00d" }])
      expect(parseHash(hrefOf(route))).toEqual(route);
  });
});

describe("knowledgeSearch", () => {
  it("joins lists and leaves empty values out", () => {
    expect(knowledgeSearch({})).toBe("");
    expect(
      knowledgeSearch({
        q: " tea ",
        status: ["active", "invalidated"],
        scope: ["user"],
        limit: 50,
        cursor: "",
        user: " ",
      }),
    ).toBe("?q=tea&status=active%2Cinvalidated&scope=user&limit=50");
    expect(knowledgeSearch({ user: "bob", cursor: "c 1" })).toBe("?cursor=c+1&user=bob");
  });
});

describe("barLayout", () => {
  it("scales the longest count to the span and keeps zero at zero", () => {
    const layout = barLayout(
      [
        ["merged", 10],
        ["principles", 5],
        ["proposals", 0],
      ],
      { width: 300, labelWidth: 100, valueWidth: 40, rowHeight: 20 },
    );
    expect(layout.span).toBe(160);
    expect(layout.bars.map((bar) => [bar.length, bar.y])).toEqual([
      [160, 0],
      [80, 20],
      [0, 40],
    ]);
    expect(layout.height).toBe(60);
  });

  it("draws a tiny count as at least one unit and survives no counts", () => {
    expect(
      barLayout([
        ["a", 1],
        ["b", 10_000],
      ]).bars[0]?.length,
    ).toBe(1);
    expect(barLayout([]).bars).toEqual([]);
  });
});
