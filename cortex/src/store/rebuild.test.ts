import { describe, expect, it } from "vitest";
import { expiredKept, keptFrom, rebuildTarget } from "./rebuild.js";
import { knowledgeRebuiltBelow, templateVersion } from "./templates.js";

describe("rebuildTarget", () => {
  it("rebuilds an index built before the analyzers changed into the current version's index", () => {
    expect(rebuildTarget("r-knowledge", "r-knowledge-v3", knowledgeRebuiltBelow - 1)).toEqual({
      alias: "r-knowledge",
      from: "r-knowledge-v3",
      to: `r-knowledge-v${templateVersion}`,
      fromTemplateVersion: knowledgeRebuiltBelow - 1,
    });
    // An index whose _meta says nothing was built before versions were recorded.
    expect(rebuildTarget("r-knowledge", "r-knowledge-v1", 0)?.to).toBe(`r-knowledge-v${templateVersion}`);
  });

  it("leaves an index built at or after the change alone, whatever its name", () => {
    expect(rebuildTarget("r-knowledge", `r-knowledge-v${templateVersion}`, templateVersion)).toBeUndefined();
    expect(rebuildTarget("r-knowledge", "r-knowledge-v3", knowledgeRebuiltBelow)).toBeUndefined();
  });
});

describe("keptFrom", () => {
  it("lists the indices the alias does not name, with the replacement that took over from each", () => {
    const kept = keptFrom(["r-knowledge-v4"], {
      "r-knowledge-v4": {
        templateVersion: 4,
        rebuiltFrom: "r-knowledge-v3",
        rebuiltAt: "2026-11-20T10:00:00.000Z",
      },
      "r-knowledge-v3": { templateVersion: 3 },
      "r-knowledge-v2": { templateVersion: 2 },
    });
    expect(kept).toEqual([
      { index: "r-knowledge-v2" },
      { index: "r-knowledge-v3", replacedBy: "r-knowledge-v4", replacedAt: "2026-11-20T10:00:00.000Z" },
    ]);
  });

  it("never lists a copy still being made (it names its task)", () => {
    const kept = keptFrom(["r-knowledge-v3"], {
      "r-knowledge-v3": { templateVersion: 3 },
      "r-knowledge-v4": { templateVersion: 4, rebuildTask: "node:42" },
    });
    expect(kept).toEqual([]);
  });
});

describe("expiredKept", () => {
  const kept = [{ index: "a", replacedBy: "b", replacedAt: "2026-11-20T10:00:00.000Z" }, { index: "c" }];
  it("deletes an index once its replacement has served for the retention", () => {
    expect(expiredKept(kept, new Date("2026-11-27T09:59:59.000Z"), 7)).toEqual([]);
    expect(expiredKept(kept, new Date("2026-11-27T10:00:00.000Z"), 7).map((entry) => entry.index)).toEqual([
      "a",
    ]);
  });

  it("keeps an index whose replacement time is unknown until an admin confirms", () => {
    expect(expiredKept(kept, new Date("2030-01-01T00:00:00.000Z"), 0).map((entry) => entry.index)).toEqual([
      "a",
    ]);
  });
});
