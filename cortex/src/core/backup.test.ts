import { describe, expect, it } from "vitest";
import {
  backupIdFor,
  backupsToRemove,
  erasedPeople,
  erasuresAfter,
  forgottenFile,
  mergeForgotten,
  namedUserIds,
  notEmptyReason,
  parseForgottenFile,
} from "./backup.js";
import { erasureSubject } from "./erasure.js";

describe("backup rules", () => {
  it("names a backup by its UTC time, so names sort by age", () => {
    expect(backupIdFor(new Date("2026-11-28T07:05:09.123Z"), "a1b2c3d4")).toBe(
      "backup-20261128T070509Z-a1b2c3",
    );
    expect(() => backupIdFor(new Date("2026-11-28T07:05:09Z"), "XYZ")).toThrow(/not a backup id/);
  });

  it("keeps the newest backups and never removes the newest one", () => {
    const backups = ["2026-11-01", "2026-11-03", "2026-11-02", "2026-11-04"].map((day) => ({
      id: `b-${day}`,
      takenAt: `${day}T00:00:00.000Z`,
    }));
    expect(backupsToRemove(backups, 2).sort()).toEqual(["b-2026-11-01", "b-2026-11-02"]);
    expect(backupsToRemove(backups, 0)).toHaveLength(3);
    expect(backupsToRemove(backups, 10)).toEqual([]);
  });

  it("replays only erasures after the backup, on the people the restored data names", () => {
    const taken = "2026-11-10T00:00:00.000Z";
    const tombstones = [
      { subject: erasureSubject("carol"), erasedAt: "2026-11-12T00:00:00.000Z" },
      { subject: erasureSubject("dave"), erasedAt: "2026-11-09T00:00:00.000Z" },
      { subject: erasureSubject("erin"), erasedAt: "2026-11-11T00:00:00.000Z" },
    ];
    const later = erasuresAfter(tombstones, taken);
    expect(later.map((t) => t.subject)).toEqual([erasureSubject("carol"), erasureSubject("erin")]);
    // Erin had nothing in the backup; Dave was erased before it and is not replayed.
    expect(erasedPeople(later, ["ana", "carol", "dave", "carol"])).toEqual([
      { userId: "carol", erasedAt: "2026-11-12T00:00:00.000Z" },
    ]);
  });

  it("reads the person ids a document names: owner, archive owners and authors", () => {
    expect(namedUserIds({ owner: { userId: "ana", householdId: "h1" } })).toEqual(["ana"]);
    expect(namedUserIds({ ownerIds: ["ana", "bob"], authorIds: ["carol", 7] })).toEqual([
      "ana",
      "bob",
      "carol",
    ]);
    expect(namedUserIds(null)).toEqual([]);
    expect(namedUserIds({ owner: { userId: 3 } })).toEqual([]);
  });

  it("takes a restore only on a Cortex that holds nothing but its seeded dimensions", () => {
    const empty = { documents: { knowledge: 0, dimensions: 4 }, archivedDocuments: 0, commits: 0 };
    expect(notEmptyReason(empty)).toBeUndefined();
    expect(notEmptyReason({ ...empty, documents: { knowledge: 3, chunks: 1 }, commits: 2 })).toBe(
      "this Cortex already holds data (3 in knowledge, 1 in chunks, 2 commits in the workspace repository); restore onto a fresh appliance, or erase this one first",
    );
    expect(notEmptyReason({ ...empty, archivedDocuments: 1 })).toMatch(/1 archived documents/);
  });
});

describe("the destination's copy of forget tombstones", () => {
  const subject = (n: number) => n.toString(16).padStart(64, "0");
  const mark = (n: number, forgottenAt: string, kind: "object" | "statement" = "object") => ({
    subject: subject(n),
    kind,
    forgottenAt,
    owner: subject(99),
  });

  it("adds new subjects, keeps a subject's first time, and says whether anything changed", () => {
    const existing = [mark(2, "2026-11-02T00:00:00.000Z"), mark(1, "2026-11-01T00:00:00.000Z")];
    const merged = mergeForgotten(existing, [
      mark(1, "2026-11-05T00:00:00.000Z"),
      mark(3, "2026-11-03T00:00:00.000Z", "statement"),
    ]);
    expect(merged.changed).toBe(true);
    expect(merged.marks.map((each) => [each.subject.slice(-1), each.forgottenAt])).toEqual([
      ["1", "2026-11-01T00:00:00.000Z"],
      ["2", "2026-11-02T00:00:00.000Z"],
      ["3", "2026-11-03T00:00:00.000Z"],
    ]);
    expect(mergeForgotten(merged.marks, [mark(2, "2026-11-09T00:00:00.000Z")]).changed).toBe(false);
    // An earlier time for a known subject moves it back: forgotten for good from the first time.
    expect(mergeForgotten(merged.marks, [mark(2, "2026-10-01T00:00:00.000Z")]).marks[1]?.forgottenAt).toBe(
      "2026-10-01T00:00:00.000Z",
    );
  });

  it("reads back what it writes, and refuses a file that is not a list of tombstones", () => {
    const marks = [
      mark(1, "2026-11-01T00:00:00.000Z"),
      { subject: subject(2), kind: "statement" as const, forgottenAt: "2026-11-02T00:00:00.000Z" },
    ];
    expect(parseForgottenFile(forgottenFile(marks))).toEqual(marks);
    for (const bad of [
      "{}",
      '{"marks":[{"subject":"carol","kind":"object","forgottenAt":"2026-11-01T00:00:00Z"}]}',
      `{"marks":[{"subject":"${subject(1)}","kind":"person","forgottenAt":"2026-11-01T00:00:00Z"}]}`,
      `{"marks":[{"subject":"${subject(1)}","kind":"object","forgottenAt":"yesterday"}]}`,
    ])
      expect(() => parseForgottenFile(bad), bad).toThrow("forgotten.json is not a list of forget tombstones");
    expect(() => parseForgottenFile("not json")).toThrow();
  });
});
