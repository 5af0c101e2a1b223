/**
 * The rules of backup and restore, over plain data: how a backup is named, which backups retention removes, which
 * erasures a restore must replay and on whom, the destination's copy of forget tombstones, and whether a Cortex is empty enough to restore onto.
 */
import { type BackupSummary, backupIdPattern } from "@remram/contract";
import { erasureSubject } from "./erasure.js";
import type { ForgottenMark } from "./forgotten.js";

/** backup-<yyyymmddThhmmssZ>-<6 hex>: sorts by the time it was taken. */
export function backupIdFor(takenAt: Date, random: string): string {
  const stamp = takenAt
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  const id = `backup-${stamp}-${random.slice(0, 6)}`;
  if (!backupIdPattern.test(id)) throw new Error(`not a backup id: ${id}`);
  return id;
}

/** The backups retention removes: all but the `keep` newest complete ones (never the newest, whatever `keep`). */
export function backupsToRemove(
  backups: readonly Pick<BackupSummary, "id" | "takenAt">[],
  keep: number,
): string[] {
  const newestFirst = [...backups].sort((a, b) =>
    a.takenAt < b.takenAt ? 1 : a.takenAt > b.takenAt ? -1 : 0,
  );
  return newestFirst.slice(Math.max(1, keep)).map((backup) => backup.id);
}

export interface DestinationTombstone {
  /** erasureSubject(userId): the destination never holds a person's id. */
  subject: string;
  erasedAt: string;
}

/** Erasures recorded after the backup was taken: what the backup holds of those people must go again. */
export function erasuresAfter(
  tombstones: readonly DestinationTombstone[],
  takenAt: string,
): DestinationTombstone[] {
  const taken = Date.parse(takenAt);
  return tombstones.filter((tombstone) => Date.parse(tombstone.erasedAt) > taken);
}

/**
 * The people (by user id) behind erased subjects, among the ids the restored data names. A subject no restored
 * item names had nothing in the backup: its tombstone is still recorded, nothing is erased.
 */
export function erasedPeople(
  subjects: readonly DestinationTombstone[],
  namedUserIds: Iterable<string>,
): { userId: string; erasedAt: string }[] {
  const wanted = new Map(subjects.map((tombstone) => [tombstone.subject, tombstone.erasedAt]));
  const people: { userId: string; erasedAt: string }[] = [];
  for (const userId of new Set(namedUserIds)) {
    const erasedAt = wanted.get(erasureSubject(userId));
    if (erasedAt !== undefined) people.push({ userId, erasedAt });
  }
  return people.sort((a, b) => (a.userId < b.userId ? -1 : 1));
}

/** The person ids a stored document names: its owner, and an archived document's owners and authors. */
export function namedUserIds(source: unknown): string[] {
  if (typeof source !== "object" || source === null) return [];
  const document = source as { owner?: { userId?: unknown }; ownerIds?: unknown; authorIds?: unknown };
  const ids: string[] = [];
  if (typeof document.owner?.userId === "string") ids.push(document.owner.userId);
  for (const list of [document.ownerIds, document.authorIds]) {
    if (Array.isArray(list)) for (const id of list) if (typeof id === "string") ids.push(id);
  }
  return ids;
}

export interface TargetContents {
  /** Documents in the indices a restore writes, by index name without the prefix. */
  documents: Record<string, number>;
  archivedDocuments: number;
  commits: number;
}

/**
 * Why this Cortex cannot take a restore, or undefined when it holds nothing a restore would overwrite or mix with.
 * The dimension registry is left out: a fresh Cortex seeds it at start.
 */
export function notEmptyReason(target: TargetContents): string | undefined {
  const held = Object.entries(target.documents)
    .filter(([name, count]) => name !== "dimensions" && count > 0)
    .map(([name, count]) => `${count} in ${name}`);
  if (target.archivedDocuments > 0) held.push(`${target.archivedDocuments} archived documents`);
  if (target.commits > 0) held.push(`${target.commits} commits in the workspace repository`);
  return held.length === 0
    ? undefined
    : `this Cortex already holds data (${held.join(", ")}); restore onto a fresh appliance, or erase this one first`;
}

/**
 * The destination's copy of every forget's tombstones (`forgotten.json`): a restore of a backup older than a forget
 * records them again and removes the objects they name. Digests only, like the index they copy.
 */
export const forgottenFileName = "forgotten.json";

const digestPattern = /^[a-f0-9]{64}$/;

function isMark(value: unknown): value is ForgottenMark {
  const mark = value as Partial<ForgottenMark> | null;
  return (
    typeof mark === "object" &&
    mark !== null &&
    typeof mark.subject === "string" &&
    digestPattern.test(mark.subject) &&
    (mark.kind === "object" || mark.kind === "statement") &&
    typeof mark.forgottenAt === "string" &&
    !Number.isNaN(Date.parse(mark.forgottenAt)) &&
    (mark.owner === undefined || (typeof mark.owner === "string" && digestPattern.test(mark.owner)))
  );
}

/** The file's marks; throws on anything else, since a restore must not go on without the forgets it is to replay. */
export function parseForgottenFile(text: string): ForgottenMark[] {
  const parsed = JSON.parse(text) as { marks?: unknown };
  if (!Array.isArray(parsed.marks) || !parsed.marks.every(isMark))
    throw new Error(`${forgottenFileName} is not a list of forget tombstones`);
  return parsed.marks.map(({ subject, kind, forgottenAt, owner }) => ({
    subject,
    kind,
    forgottenAt,
    ...(owner !== undefined && { owner }),
  }));
}

/** Both lists in one, a subject once with its first time (forgotten for good from then on), sorted by subject. */
export function mergeForgotten(
  existing: readonly ForgottenMark[],
  added: readonly ForgottenMark[],
): { marks: ForgottenMark[]; changed: boolean } {
  const bySubject = new Map(existing.map((mark) => [mark.subject, mark]));
  let changed = false;
  for (const mark of added) {
    const known = bySubject.get(mark.subject);
    if (known !== undefined && Date.parse(known.forgottenAt) <= Date.parse(mark.forgottenAt)) continue;
    bySubject.set(mark.subject, mark);
    changed = true;
  }
  const marks = [...bySubject.values()].sort((a, b) => (a.subject < b.subject ? -1 : 1));
  return { marks, changed };
}

export function forgottenFile(marks: readonly ForgottenMark[]): string {
  return `${JSON.stringify({ marks })}\n`;
}
