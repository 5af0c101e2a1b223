import type { CandidateDimension, KnowledgeObject } from "@remram/contract";
import type { MaturingObject } from "../core/knowledge.js";
import type { CandidateDimensionStats } from "./dimensions.js";

/** Plain-data parts of a cycle's input, from what the shell loaded. */

/**
 * The candidates with the mean confidence of the live objects carrying each (the DimensionPolicy's
 * candidatePromotion.minConfidence is about those objects, not about reflection's reports).
 */
export function candidateStats(
  candidates: readonly CandidateDimension[],
  objects: readonly MaturingObject[],
): CandidateDimensionStats[] {
  const confidenceByDimension = new Map<string, { sum: number; count: number }>();
  for (const object of objects) {
    for (const [name, values] of Object.entries(object.dimensions)) {
      if (values.length === 0) continue;
      const entry = confidenceByDimension.get(name) ?? { sum: 0, count: 0 };
      confidenceByDimension.set(name, { sum: entry.sum + object.confidence, count: entry.count + 1 });
    }
  }
  return candidates.map((c) => {
    const carrying = confidenceByDimension.get(c.name) ?? { sum: 0, count: 0 };
    const meanConfidence = carrying.sum / Math.max(1, carrying.count);
    return { name: c.name, occurrences: c.occurrences, meanConfidence, values: c.sampleValues };
  });
}

/** Privacy and consent as one key per object: near-duplicates merge only within one key. */
export function governanceKeys(objects: Iterable<KnowledgeObject>): Map<string, string> {
  const keys = new Map<string, string>();
  for (const { id, privacy, consent } of objects) {
    keys.set(id, `${privacy}|${consent.retrieval}|${[...consent.agents].sort().join(",")}`);
  }
  return keys;
}
