import { describe, expect, it } from "vitest";
import { storedObject } from "../testing/fixtures.js";
import { inlineText, renderPersonExport } from "./person-export.js";

const at = "2026-03-01T00:00:00.000Z";
const mine = { scope: "user", owner: { userId: "ana", householdId: "h1" }, privacy: "private" } as const;

describe("renderPersonExport", () => {
  const exported = {
    userId: "ana",
    exportedAt: "2026-11-28T01:00:00.000Z",
    knowledge: [
      storedObject({ id: "k1", statement: "Ana drinks her coffee black", ...mine, userDirective: true }),
      storedObject({
        id: "k2",
        statement: "Ana takes milk in her coffee",
        ...mine,
        status: "invalidated",
        validity: { validFrom: at, invalidAt: "2026-06-02T10:00:00.000Z" },
      }),
      storedObject({ id: "k3", ...mine }),
    ],
    transcripts: [
      {
        hash: "a".repeat(64),
        summary: "Planning the *June* visit to Bergen",
        privacy: "private",
        allowRecall: false,
        sourceSession: "s1",
        sourceChannel: "telegram",
        createdAt: "2026-05-01T08:00:00.000Z",
        archivedAt: "2026-05-01T09:00:00.000Z",
      },
    ],
  };
  const markdown = renderPersonExport(exported);

  it("lists current knowledge apart from what was corrected, with when it stopped holding", () => {
    const [current, past] = markdown.split("## Corrected or faded");
    expect(current).toContain("Ana drinks her coffee black");
    expect(current).toContain("you asked to keep it");
    expect(current).toContain(
      "The boat is in the north shed (fact; confidence 0.50; from reflection on 2026-03-01",
    );
    expect(current).toContain("place: North Shed");
    expect(current).not.toContain("milk");
    expect(past).toContain("Ana takes milk in her coffee");
    expect(past).toContain("invalidated on 2026-06-02");
    expect(markdown).toContain("2 current knowledge items, 1 corrected or faded, 1 archived conversations");
  });

  it("lists archived conversations by summary and hash, saying whether the full text may be read", () => {
    expect(markdown).toContain(
      `- 2026-05-01, telegram: Planning the \\*June\\* visit to Bergen (summary only) \`${"a".repeat(64)}\``,
    );
  });

  it("says so when there is nothing", () => {
    const empty = renderPersonExport({ ...exported, knowledge: [], transcripts: [] });
    expect(empty.match(/^Nothing\.$/gm)).toHaveLength(3);
  });

  it("keeps statements from becoming markup or breaking the list", () => {
    expect(inlineText("line one\n# not a heading [link](x) <b>|")).toBe(
      "line one \\# not a heading \\[link\\](x) \\<b\\>\\|",
    );
  });
});
