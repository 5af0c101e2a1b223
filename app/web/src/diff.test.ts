import { describe, expect, it } from "vitest";
import { diffStat, parseUnifiedDiff } from "./diff.js";

const diff = `diff --git a/notes/food.md b/notes/food.md
index 1111111..2222222 100644
--- a/notes/food.md
+++ b/notes/food.md
@@ -1,4 +1,4 @@
 # Food
-- Alice likes tea
+- Alice likes coffee
 - Bob is vegetarian
---- a divider deleted
\\ No newline at end of file
`;

describe("parseUnifiedDiff", () => {
  it("tells headers, hunks, additions, deletions and context apart, with line numbers", () => {
    const parsed = parseUnifiedDiff(diff);
    expect(parsed.lines.map((line) => line.kind)).toEqual([
      "file",
      "file",
      "file",
      "file",
      "hunk",
      "context",
      "del",
      "add",
      "context",
      "del",
      "note",
    ]);
    expect(parsed.lines[5]).toEqual({ kind: "context", text: " # Food", oldLine: 1, newLine: 1 });
    expect(parsed.lines[6]).toMatchObject({ kind: "del", oldLine: 2 });
    expect(parsed.lines[7]).toMatchObject({ kind: "add", newLine: 2 });
    expect(parsed.lines[9]).toMatchObject({ kind: "del", text: "---- a divider deleted", oldLine: 4 });
    expect(diffStat(parsed)).toBe("1 added, 2 removed");
  });

  it("reads a new file's diff and a hunk header without counts", () => {
    const parsed = parseUnifiedDiff("--- /dev/null\n+++ b/new.md\n@@ -0,0 +1 @@\n+hello\n");
    expect(parsed.lines.map((line) => line.kind)).toEqual(["file", "file", "hunk", "add"]);
    expect(parsed.lines[3]).toMatchObject({ newLine: 1 });
  });

  it("reads on past a hunk whose header miscounted", () => {
    const parsed = parseUnifiedDiff("@@ -1 +1 @@\n-a\n+b\n+c\n");
    expect(parsed.lines.map((line) => line.kind)).toEqual(["hunk", "del", "add", "add"]);
    expect(parsed.additions).toBe(2);
  });

  it("keeps CRLF diffs and empty input sane", () => {
    expect(parseUnifiedDiff("@@ -1 +1 @@\r\n-a\r\n+b\r\n").lines.map((line) => line.text)).toEqual([
      "@@ -1 +1 @@",
      "-a",
      "+b",
    ]);
    expect(parseUnifiedDiff("").lines).toEqual([]);
  });
});
