import { z } from "zod";
import { dimensionName, dimensionValue, knowledgeType, principal, privacyLevel, scope } from "./common.js";
import { chunkLevel } from "./knowledge.js";

export const retrieveLimits = { maxTokenBudget: 16_000, minTokenBudget: 16, maxRequestChars: 8_000 } as const;

const tokenBudgetMessage = `outside ${retrieveLimits.minTokenBudget}..${retrieveLimits.maxTokenBudget}`;

export const retrieveRequest = z
  .object({
    principal,
    requestText: z.string().min(1).max(retrieveLimits.maxRequestChars),
    intent: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        'e.g. "recall", "decision", "live_state". "live_state" (or "live", "status", "current_state") renders the bundle as history with an instruction to check live state first; without an intent Cortex detects live-state questions itself (liveStatePhrase).',
      ),
    domainHints: z
      .array(z.string().min(1).max(192))
      .max(16)
      .optional()
      .describe(
        '"name:value" dimension tags or bare values; they raise dimension overlap, they do not filter.',
      ),
    dimensionFilters: z
      .record(dimensionName, z.array(dimensionValue).min(1).max(32))
      .optional()
      .describe("Hard filters: an item must carry one of the listed values for every named dimension."),
    types: z.array(knowledgeType).min(1).max(5).optional(),
    minConfidence: z.number().min(0).max(1).optional(),
    tokenBudget: z
      .int()
      .min(retrieveLimits.minTokenBudget, tokenBudgetMessage)
      .max(retrieveLimits.maxTokenBudget, tokenBudgetMessage)
      .describe(
        `Hard ceiling for the bundle text, ${retrieveLimits.minTokenBudget}..${retrieveLimits.maxTokenBudget}.`,
      ),
    mode: z.enum(["standard", "deep"]).default("standard"),
    modelLocation: z
      .enum(["local", "cloud"])
      .default("cloud")
      .describe(
        "Where the model the bundle is for runs. For a cloud model, items holding contact details are left out, and private items unless allowPrivateToCloud; unknown counts as cloud.",
      ),
    allowPrivateToCloud: z
      .boolean()
      .default(false)
      .describe(
        "The operator lets the asking user's private items reach a cloud model (items holding contact details never do).",
      ),
    debug: z.boolean().default(false),
  })
  .strict();
export type RetrieveRequest = z.infer<typeof retrieveRequest>;
export type RetrieveRequestInput = z.input<typeof retrieveRequest>;

export const bundleSectionNames = [
  "constraints",
  "preferences",
  "decisions",
  "principles",
  "facts",
  "context",
  "background",
] as const;
export const bundleSectionName = z.enum(bundleSectionNames);
export type BundleSectionName = z.infer<typeof bundleSectionName>;

export const bundleSection = z.object({
  name: bundleSectionName,
  itemIds: z.array(z.string()),
  tokens: z.int().min(0),
});

export const retrievedFact = z.object({
  id: z.string(),
  scope,
  privacy: privacyLevel,
  statement: z.string(),
  type: knowledgeType,
  confidence: z.number(),
  score: z.number(),
  dimensions: z.record(z.string(), z.array(z.string())),
});
export type RetrievedFact = z.infer<typeof retrievedFact>;

export const retrievedChunk = z.object({
  id: z.string(),
  scope,
  privacy: privacyLevel,
  level: chunkLevel,
  sourceId: z.string(),
  sourceKind: z.string(),
  text: z.string(),
  score: z.number(),
  expandedFrom: z.string().nullable().describe("Set when added as a neighbour of a selected chunk."),
  documentHash: z
    .string()
    .nullable()
    .optional()
    .describe(
      "The archive hash of the transcript the chunk came from (GET /archive/{hash}); null otherwise.",
    ),
});
export type RetrievedChunk = z.infer<typeof retrievedChunk>;

export const artifactRef = z.object({
  sourceId: z.string(),
  path: z.string().nullable(),
  title: z.string().nullable(),
});
export type ArtifactRef = z.infer<typeof artifactRef>;

export const exclusionReasons = ["near_duplicate", "token_budget", "rank_cutoff"] as const;

export const traceItem = z.object({
  id: z.string(),
  kind: z.enum(["fact", "chunk"]),
  bm25Rank: z.int().nullable(),
  bm25Score: z.number().nullable(),
  knnRank: z.int().nullable(),
  knnScore: z.number().nullable(),
  facetRank: z.int().nullable(),
  hopRank: z.int().nullable().describe("Rank in the second hop's list (names the first hop found)."),
  fused: z.number(),
  features: z.object({
    confidence: z.number(),
    recency: z.number(),
    usage: z.number(),
    provenanceTrust: z.number(),
    dimensionOverlap: z.number(),
    multiplier: z.number(),
  }),
  score: z.number(),
  selected: z.boolean(),
  excludedBecause: z.enum(exclusionReasons).nullable(),
});
export type TraceItem = z.infer<typeof traceItem>;

export const retrieveTrace = z.object({
  policyFilterClauses: z
    .int()
    .describe("Hard filters applied inside every query; ineligible items are never scored."),
  fusion: z.string(),
  items: z.array(traceItem),
  timingsMs: z.record(z.string(), z.number()),
});

export const retrieveResponse = z.object({
  bundle: z.object({
    text: z
      .string()
      .describe(
        "The knowledge block (renderBundle, between bundleOpen and bundleClose), to inject as is; empty when nothing qualified and the request is not about live state.",
      ),
    tokens: z
      .int()
      .min(0)
      .describe(
        "Tokens of `text` by Cortex's tokenizer (o200k_base), framing included; at most tokenBudget.",
      ),
    tokenBudget: z.int(),
    sections: z.array(bundleSection),
  }),
  facts: z.array(retrievedFact),
  chunks: z.array(retrievedChunk),
  artifactRefs: z.array(artifactRef),
  aggregateConfidence: z.number().min(0).max(1),
  lowConfidence: z.boolean(),
  degraded: z.boolean(),
  degradedReasons: z.array(z.string()),
  liveState: z.object({
    detected: z.boolean().describe("The request asks about current live state: memory is not authoritative."),
    reason: z.string().nullable(),
  }),
  candidatesConsidered: z.int().min(0),
  trace: retrieveTrace.optional(),
});
export type RetrieveResponse = z.infer<typeof retrieveResponse>;
