/**
 * Seed 004's storage lifecycle as rules: a document stays hot (a plain file) while it is read, goes warm (compressed
 * file of its own) after `warmAfterDays` without a read and cold (packed into a bundle with others, behind the
 * manifest) after `coldAfterDays`. Tiers only ever move down; a recall reads a document wherever it lies and, by
 * resetting its idle clock, keeps it from moving further. Pure: `now` and each document's times come in as data.
 */

export type StorageTier = "hot" | "warm" | "cold";

export interface TierRules {
  warmAfterDays: number;
  coldAfterDays: number;
  /** Documents per cold bundle, and the canonical bytes a bundle holds at most (one larger document is alone). */
  bundleMaxDocuments: number;
  bundleMaxBytes: number;
}

export const defaultTierRules: TierRules = {
  warmAfterDays: 30,
  coldAfterDays: 180,
  bundleMaxDocuments: 256,
  bundleMaxBytes: 64 * 1024 * 1024,
};

export interface TierCandidate {
  hash: string;
  tier: StorageTier;
  /** Canonical (uncompressed) bytes. */
  size: number;
  /** When it was archived. */
  archivedAt: string;
  /** Its last recall, from the summary index; absent when the index does not know it. */
  lastAccessedAt?: string | undefined;
}

export interface TieringPlan {
  toWarm: string[];
  /** Each inner list becomes one bundle. */
  toCold: string[][];
}

const dayMs = 86_400_000;
const rank: Record<StorageTier, number> = { hot: 0, warm: 1, cold: 2 };

/** The tier a document belongs in after `idleDays` without a read. */
export function tierFor(
  idleDays: number,
  rules: Pick<TierRules, "warmAfterDays" | "coldAfterDays">,
): StorageTier {
  if (idleDays >= rules.coldAfterDays) return "cold";
  if (idleDays >= rules.warmAfterDays) return "warm";
  return "hot";
}

/** Days since the later of archiving and the last recall (0 for a time in the future). */
export function idleDays(
  candidate: Pick<TierCandidate, "archivedAt" | "lastAccessedAt">,
  now: string,
): number {
  const archived = Date.parse(candidate.archivedAt);
  const accessed = candidate.lastAccessedAt === undefined ? Number.NaN : Date.parse(candidate.lastAccessedAt);
  const last = Number.isNaN(accessed) ? archived : Math.max(archived, accessed);
  if (Number.isNaN(last)) return 0;
  return Math.max(0, (Date.parse(now) - last) / dayMs);
}

/**
 * What one pass moves: documents whose tier is above the one their idleness calls for, warm ones alone, cold ones
 * packed in hash order into bundles bounded by count and bytes. Nothing moves up.
 */
export function planTiering(
  candidates: readonly TierCandidate[],
  rules: TierRules,
  now: string,
): TieringPlan {
  const toWarm: string[] = [];
  const cold: TierCandidate[] = [];
  for (const candidate of [...candidates].sort((a, b) => (a.hash < b.hash ? -1 : a.hash > b.hash ? 1 : 0))) {
    const target = tierFor(idleDays(candidate, now), rules);
    if (rank[target] <= rank[candidate.tier]) continue;
    if (target === "warm") toWarm.push(candidate.hash);
    else cold.push(candidate);
  }
  const toCold: string[][] = [];
  let bundle: string[] = [];
  let bytes = 0;
  for (const candidate of cold) {
    const full =
      bundle.length >= rules.bundleMaxDocuments ||
      (bundle.length > 0 && bytes + candidate.size > rules.bundleMaxBytes);
    if (full) {
      toCold.push(bundle);
      bundle = [];
      bytes = 0;
    }
    bundle.push(candidate.hash);
    bytes += candidate.size;
  }
  if (bundle.length > 0) toCold.push(bundle);
  return { toWarm, toCold };
}
