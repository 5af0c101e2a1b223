import { z } from "zod";
import type { Principal } from "./principal.js";

/**
 * What the hooks send to and read from Cortex. Responses are read leniently (unknown fields pass, missing
 * optional parts default) so a newer Cortex never breaks a user's run; only the fields used here are typed.
 */

const knowledgeItemFields = {
  id: z.string(),
  /** user | household | shared */
  scope: z.string().optional(),
  /** Privacy level, e.g. public | household | private | secret. */
  privacy: z.string().optional(),
  /** Consent flags; `cloud: true` lets a private item reach a cloud model. */
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
  path: z.string(),
  title: z.string().optional(),
});

export const RetrieveResponseSchema = z.looseObject({
  facts: z.array(RetrievedFactSchema).default([]),
  chunks: z.array(RetrievedChunkSchema).default([]),
  artifactRefs: z.array(ArtifactRefSchema).default([]),
  confidence: z.number().optional(),
  lowConfidence: z.boolean().default(false),
  degraded: z.boolean().default(false),
  /** Set when the request asks about live state that memory cannot answer authoritatively. */
  liveStateIntent: z.boolean().default(false),
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

/** One captured tool result, as queued on disk and posted to /ingest. */
export const CapturedToolResultSchema = z.strictObject({
  kind: z.literal("tool_result"),
  provenanceKey: z.string().min(1),
  principal: z.strictObject({
    userId: z.string(),
    householdId: z.string().optional(),
    agentId: z.string(),
  }),
  sessionKey: z.string(),
  toolName: z.string(),
  toolCallId: z.string().optional(),
  isError: z.boolean(),
  text: z.string(),
  truncated: z.boolean(),
  details: z.unknown().optional(),
  occurredAt: z.string(),
  capturedAt: z.string(),
});

export type CapturedToolResult = z.infer<typeof CapturedToolResultSchema>;

export const IngestResponseSchema = z.looseObject({
  results: z.array(z.looseObject({ provenanceKey: z.string(), status: z.string().optional() })).default([]),
});
