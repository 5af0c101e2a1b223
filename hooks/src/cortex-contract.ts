import { z } from "zod";
import type { Principal } from "./principal.js";

/**
 * What the hooks send to and read from Cortex, mirroring cortex/src/schemas (retrieve.ts, ingest.ts) and
 * cortex/src/reflect/schema.ts; contract.test.ts checks these against Cortex's own zod schemas. Responses are
 * read leniently (unknown fields pass, missing optional parts default) so a newer Cortex never breaks a run.
 */

const knowledgeItemFields = {
  id: z.string(),
  /** user | household | shared, when Cortex reports it. */
  scope: z.string().optional(),
  /** public | household | private | secret, when Cortex reports it; unknown counts as private. */
  privacy: z.string().optional(),
  /** `cloud: true` would let a private item reach a cloud model (not yet a Cortex consent flag). */
  consent: z.looseObject({ cloud: z.boolean().optional() }).optional(),
  confidence: z.number().optional(),
};

export const RetrievedFactSchema = z.looseObject({
  ...knowledgeItemFields,
  statement: z.string(),
  /** fact | preference | constraint | decision | principle */
  type: z.string().default("fact"),
});

export const RetrievedChunkSchema = z.looseObject({
  ...knowledgeItemFields,
  text: z.string(),
  level: z.string().optional(),
});

export const ArtifactRefSchema = z.looseObject({
  sourceId: z.string().optional(),
  path: z.string().nullable().optional(),
  title: z.string().nullable().optional(),
});

export const RetrieveResponseSchema = z.looseObject({
  facts: z.array(RetrievedFactSchema).default([]),
  chunks: z.array(RetrievedChunkSchema).default([]),
  artifactRefs: z.array(ArtifactRefSchema).default([]),
  lowConfidence: z.boolean().default(false),
  degraded: z.boolean().default(false),
  /** The request asks about current live state: memory is not authoritative for it. */
  liveState: z.looseObject({ detected: z.boolean().default(false) }).prefault({}),
});

export type RetrievedFact = z.infer<typeof RetrievedFactSchema>;
export type RetrievedChunk = z.infer<typeof RetrievedChunkSchema>;
export type RetrieveResponse = z.infer<typeof RetrieveResponseSchema>;

export interface RetrieveRequest {
  principal: Principal;
  requestText: string;
  tokenBudget: number;
  mode: "standard" | "deep";
}

/** Cortex's limits that the hooks must respect (cortex/src/schemas: ingestLimits, retrieveLimits). */
export const cortexLimits = {
  maxIngestEvents: 256,
  maxToolOutputChars: 64_000,
  maxRequestChars: 8_000,
  minTokenBudget: 16,
  maxTokenBudget: 16_000,
} as const;

const identifier = z.string().regex(/^[A-Za-z0-9._:@/+-]{1,128}$/);

/**
 * One captured tool result: a Cortex `tool_result` ingest event, queued on disk as is and posted to /ingest.
 * A tool ran in the user's own session, so its output is the user's (scope user, owned by the principal);
 * the privacy level is left to Cortex's dimension policy default.
 */
export const ToolResultEventSchema = z.strictObject({
  kind: z.literal("tool_result"),
  provenanceKey: z.string().min(1).max(512),
  sessionId: identifier.optional(),
  agentId: identifier,
  channel: z.string().max(128).optional(),
  turnIds: z.array(z.string().min(1).max(128)).max(64).optional(),
  observedAt: z.string(),
  scope: z.literal("user"),
  owner: z.strictObject({ userId: identifier, householdId: identifier.optional() }),
  tool: z.string().min(1).max(128),
  toolCallId: z.string().min(1).max(128).optional(),
  output: z.string().min(1).max(cortexLimits.maxToolOutputChars),
});

export type ToolResultEvent = z.infer<typeof ToolResultEventSchema>;

export const IngestResponseSchema = z.looseObject({
  created: z.number().optional(),
  duplicates: z.number().optional(),
});
