import { z } from "zod";
import { dimensionName, knowledgeType, privacyLevel, scope } from "./common.js";

const unitWeight = z.number().min(0).max(10);

/** How much each ranking signal counts; the DimensionPolicy CRD's spec.retrievalWeights is this schema. */
export const retrievalWeights = z
  .object({
    // Knowledge objects, measured on the labelled corpora: BM25 as a tie-breaker among vector neighbours.
    bm25: unitWeight.default(0.35),
    vector: unitWeight.default(1),
    // Chunks (conversation turns, transcripts, tool output), measured on two conversation sets: on LoCoMo names and
    // rare words carry the answer (BM25 ahead), on the generated sets questions are worded apart from what was said
    // (vectors ahead). BM25 leads by a little: the most the generated sets gain while LoCoMo stays above BM25
    // alone (docs/cortex-ranking.md).
    chunkBm25: unitWeight.default(1),
    chunkVector: unitWeight.default(0.75),
    // Chunks' second hop (a BM25 search for the names the first hop's best items carry and the question lacks): it
    // finds the other half of an answer said across two sessions. Knowledge objects have none: on the labelled
    // household corpus it pulled in objects that only shared a name (docs/cortex-ranking.md).
    chunkHop: unitWeight.default(0.5),
    recency: unitWeight.default(0.3),
    confidence: unitWeight.default(0.5),
    usage: unitWeight.default(0.2),
    dimensionOverlap: unitWeight.default(0.4),
    provenanceTrust: unitWeight.default(0.3),
  })
  .strict()
  .prefault({});

const probability = z.number().min(0).max(1);

/**
 * The dimension policy: the body the operator's DimensionPolicy PUTs (its spec without applianceRef).
 * Every part has defaults so an empty body is a valid policy.
 */
export const dimensionPolicy = z
  .object({
    dimensions: z
      .array(
        z
          .object({
            name: dimensionName,
            description: z.string().max(512).optional(),
            values: z.array(z.string().min(1).max(128)).max(256).optional(),
          })
          .strict(),
      )
      .max(64)
      .default([]),
    candidatePromotion: z
      .object({
        minOccurrences: z.int().min(1).max(1000).default(3),
        minConfidence: probability.default(0.7),
      })
      .strict()
      .prefault({}),
    eligibility: z
      .object({
        minConfidence: probability.default(0.2),
        excludeTypes: z.array(knowledgeType).max(5).default([]),
      })
      .strict()
      .prefault({}),
    privacy: z
      .object({
        defaultLevel: privacyLevel.default("household"),
        allowedScopes: z.array(scope).min(1).max(3).default(["user", "household", "shared"]),
        injectableLevels: z
          .array(privacyLevel)
          .max(4)
          .default(["public", "household"])
          .refine((levels) => !levels.includes("secret"), "secret knowledge can never be injectable"),
      })
      .strict()
      .prefault({}),
    retrievalWeights,
  })
  .strict();
export type DimensionPolicy = z.output<typeof dimensionPolicy>;
export type DimensionPolicyInput = z.input<typeof dimensionPolicy>;

export const candidateDimension = z.object({
  name: z.string(),
  occurrences: z.int().min(0),
  sampleValues: z.array(z.string()),
  firstSeenAt: z.string(),
  lastSeenAt: z.string(),
});
export type CandidateDimension = z.infer<typeof candidateDimension>;

/** A candidate dimension a dream cycle promoted: canonical beside the policy's own dimensions. */
export const promotedDimension = z.object({
  name: z.string(),
  occurrences: z.int().min(0),
  meanConfidence: z.number(),
  promotedAt: z.string(),
  cycleId: z.string(),
});
export type PromotedDimension = z.infer<typeof promotedDimension>;

export const dimensionsResponse = z.object({
  policy: dimensionPolicy,
  appliedHash: z.string().describe("sha256 of the canonical JSON of the policy in force."),
  updatedAt: z.string().nullable(),
  candidates: z.array(candidateDimension),
  promoted: z
    .array(promotedDimension)
    .default([])
    .describe(
      "The dimension registry's promoted part: candidates dream promoted with the policy's candidatePromotion " +
        "thresholds. Canonical like the policy's dimensions; the policy itself (and its hash) is left as sent.",
    ),
});
export type DimensionsResponse = z.infer<typeof dimensionsResponse>;

export const putDimensionsResponse = z.object({ appliedHash: z.string(), updatedAt: z.string() });
