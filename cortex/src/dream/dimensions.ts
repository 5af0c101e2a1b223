/**
 * Candidate dimension promotion (seed 000 §5.3.2): an attribute reflection saw that is not yet a canonical
 * dimension becomes one when the DimensionPolicy's thresholds say it recurs enough with enough confidence.
 */

export interface CandidateDimensionStats {
  name: string;
  /** How many times reflection reported it. */
  occurrences: number;
  /** Mean confidence of the live objects carrying it (0 when none). */
  meanConfidence: number;
  values: readonly string[];
}

/** DimensionPolicy spec.candidatePromotion, with the operator's defaults. */
export interface CandidatePromotionPolicy {
  minOccurrences: number;
  minConfidence: number;
}

export const defaultCandidatePromotionPolicy: CandidatePromotionPolicy = {
  minOccurrences: 3,
  minConfidence: 0.7,
};

export interface DimensionPromotion {
  name: string;
  values: readonly string[];
  occurrences: number;
  meanConfidence: number;
}

/** Candidates that pass both thresholds and are not canonical yet, sorted by name. */
export function selectDimensionPromotions(
  candidates: readonly CandidateDimensionStats[],
  canonicalNames: readonly string[],
  policy: CandidatePromotionPolicy = defaultCandidatePromotionPolicy,
): DimensionPromotion[] {
  const canonical = new Set(canonicalNames);
  return candidates
    .filter(
      (c) =>
        !canonical.has(c.name) &&
        c.occurrences >= policy.minOccurrences &&
        c.meanConfidence >= policy.minConfidence,
    )
    .map((c) => ({
      name: c.name,
      values: [...new Set(c.values)].sort(),
      occurrences: c.occurrences,
      meanConfidence: c.meanConfidence,
    }))
    .sort((a, b) => (a.name < b.name ? -1 : 1));
}
