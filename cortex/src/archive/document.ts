import { createHash } from "node:crypto";
import type { MemoryDocument, PrivacyLevel } from "@remram/contract";
import { canonicalJson } from "../core/canonical-json.js";
import { redactText, withinBound } from "../core/redaction.js";

/**
 * Archive memory documents (seed 004): a compacted transcript range, after redaction, kept immutably and
 * addressed by the SHA-256 of its canonical JSON bytes (computed before any compression). Summaries and
 * coordinates index it; the document itself is only returned when consent and policy allow.
 */

export const hashAlgorithm = "sha256";

export function sha256Hex(bytes: Uint8Array | string): string {
  return createHash(hashAlgorithm).update(bytes).digest("hex");
}

/** The canonical bytes of a document and the hash that addresses them. */
export function canonicalise(document: MemoryDocument): { bytes: Buffer; hash: string } {
  const bytes = Buffer.from(canonicalJson({ hashAlgo: hashAlgorithm, ...document }), "utf8");
  return { bytes, hash: sha256Hex(bytes) };
}

/**
 * The document as it may be kept: credentials and card numbers replaced in every message, tag and attachment
 * name and the free-text source channel (within its 64 characters), and contact details too. An archived range is recalled and searched without knowing which model the
 * reader runs, and its owners may be a household, so there is no owner to keep another person's details for.
 */
export function redactDocument(document: MemoryDocument): MemoryDocument {
  return {
    ...document,
    source: { ...document.source, channel: withinBound(redactText(document.source.channel), 64) },
    messages: document.messages.map((message) => ({ ...message, content: redactText(message.content) })),
    attachments: document.attachments.map((attachment) => ({
      ...attachment,
      name: redactText(attachment.name),
    })),
    tags: document.tags.map((tag) => redactText(tag)),
  };
}

export const coordinateBound = 15;

/** Position in seed 004's memory space. x is a day offset from "today"; y public↔private; z abstract↔physical. */
export interface Coordinates {
  x: number;
  y: number;
  z: number;
}

const dayMs = 86_400_000;

/** Days since 1970-01-01 (UTC) of an instant; the index stores this, and x is derived from it at query time. */
export function epochDay(instant: string): number {
  return Math.floor(Date.parse(instant) / dayMs);
}

/** x = 0 today, −1 yesterday, +1 tomorrow, relative to `now` (UTC days). */
export function dayOffset(instant: string, now: string): number {
  return epochDay(instant) - epochDay(now);
}

/** Default y per privacy level: public at the public end, secret at the private end. */
export const privacyAxis: Record<PrivacyLevel, number> = {
  public: -15,
  household: -5,
  private: 8,
  secret: 15,
};

export function clampAxis(value: number): number {
  if (!Number.isFinite(value)) return 0;
  return Math.max(-coordinateBound, Math.min(coordinateBound, Math.round(value)));
}

/**
 * Coordinates for a document: y from its privacy level unless the summariser placed it, z from the summariser
 * (0, the middle, when it did not); both clamped to −15..15 and rounded to whole steps.
 */
export function coordinatesFor(
  document: Pick<MemoryDocument, "createdAt" | "consentScope">,
  now: string,
  placed: { y?: number | undefined; z?: number | undefined } = {},
): Coordinates {
  return {
    x: dayOffset(document.createdAt, now),
    y: clampAxis(placed.y ?? privacyAxis[document.consentScope.privacy]),
    z: clampAxis(placed.z ?? 0),
  };
}

export interface DecayInputs {
  lastAccessedAt: string;
  reinforcementCount: number;
  now: string;
}

/** Half-life, in days, of an archived summary nobody reinforces. */
export const archiveHalfLifeDays = 30;

/**
 * Decay score in (0, 1]: 1 when just accessed, halving every half-life of disuse, where each reinforcement
 * (a recall or a re-mention) lengthens the half-life by another `archiveHalfLifeDays`. Ranking uses it; it
 * never deletes anything.
 */
export function decayScore({ lastAccessedAt, reinforcementCount, now }: DecayInputs): number {
  const idle = Math.max(0, (Date.parse(now) - Date.parse(lastAccessedAt)) / dayMs);
  const halfLife = archiveHalfLifeDays * (1 + Math.max(0, reinforcementCount));
  return 2 ** (-idle / halfLife);
}

export type RecallDecision = { allowed: true } | { allowed: false; reason: string };

/**
 * Whether a principal may read a full archived document: they must be among its owners, the document must allow
 * recall, secret documents are never recalled, and the policy's recallable privacy levels must include its level.
 */
export function mayRecall(
  consent: MemoryDocument["consentScope"],
  principal: { userId: string; householdId?: string | undefined },
  recallableLevels: readonly PrivacyLevel[],
): RecallDecision {
  const identities = [
    principal.userId,
    ...(principal.householdId === undefined ? [] : [principal.householdId]),
  ];
  if (!consent.ownerIds.some((owner) => identities.includes(owner))) {
    return { allowed: false, reason: "the principal is not among the document's owners" };
  }
  if (!consent.allowRecall)
    return { allowed: false, reason: "consent does not allow recall of the full document" };
  if (consent.privacy === "secret") return { allowed: false, reason: "secret documents are never recalled" };
  if (!recallableLevels.includes(consent.privacy)) {
    return { allowed: false, reason: `policy does not allow recall of ${consent.privacy} documents` };
  }
  return { allowed: true };
}
