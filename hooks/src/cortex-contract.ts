import {
  artifactRef,
  type ExplicitSaveRequestInput,
  explicitSaveResponse,
  type IngestRequestInput,
  identifier,
  ingestResponse,
  type ReflectRequestInput,
  type RetrieveRequestInput,
  retrievedChunk,
  retrievedFact,
  retrieveResponse,
  toolResultEvent,
} from "@remram/contract";
import { z } from "zod";

/**
 * What the hooks send to and read from Cortex, from Cortex's own schemas (@remram/contract, inlined into the
 * plugin's bundle). Requests are typed with the contract's input types, so a request field Cortex renames or drops
 * fails the hooks' typecheck. Responses are read leniently, from picks of the contract's response schemas: a
 * field the contract no longer has fails the typecheck too, but at run time unknown fields pass, missing optional
 * parts default and enumerations read as plain strings, so a newer or older Cortex (during `helm upgrade`) never
 * breaks a run. contract.test.ts checks both directions against the strict schemas.
 */

/** Fields the hooks read of every retrieved item; scope and privacy as strings, whatever values Cortex adds. */
const knowledgeItemFields = {
  /** user | household | shared, when Cortex reports it. */
  scope: z.string().optional(),
  /** public | household | private | secret, when Cortex reports it; unknown counts as private. */
  privacy: z.string().optional(),
  /** `cloud: true` would let a private item reach a cloud model (not yet a Cortex consent flag). */
  consent: z.looseObject({ cloud: z.boolean().optional() }).optional(),
  confidence: z.number().optional(),
};

export const RetrievedFactSchema = retrievedFact
  .pick({ id: true, statement: true, type: true, scope: true, privacy: true, confidence: true })
  .extend({
    ...knowledgeItemFields,
    /** fact | preference | constraint | decision | principle */
    type: z.string().default("fact"),
  })
  .loose();

export const RetrievedChunkSchema = retrievedChunk
  .pick({ id: true, text: true, level: true, scope: true, privacy: true })
  .extend({ ...knowledgeItemFields, level: z.string().optional() })
  .loose();

export const ArtifactRefSchema = artifactRef.partial().loose();

export const RetrieveResponseSchema = retrieveResponse
  .pick({
    bundle: true,
    facts: true,
    chunks: true,
    artifactRefs: true,
    lowConfidence: true,
    degraded: true,
    liveState: true,
  })
  .extend({
    /** The block Cortex rendered and counted: the hooks inject exactly this text. */
    bundle: retrieveResponse.shape.bundle
      .pick({ text: true, tokens: true })
      .extend({
        text: retrieveResponse.shape.bundle.shape.text.default(""),
        tokens: retrieveResponse.shape.bundle.shape.tokens.default(0),
      })
      .loose()
      .prefault({}),
    facts: z.array(RetrievedFactSchema).default([]),
    chunks: z.array(RetrievedChunkSchema).default([]),
    artifactRefs: z.array(ArtifactRefSchema).default([]),
    lowConfidence: retrieveResponse.shape.lowConfidence.default(false),
    degraded: retrieveResponse.shape.degraded.default(false),
    /** The request asks about current live state: memory is not authoritative for it. */
    liveState: retrieveResponse.shape.liveState
      .pick({ detected: true })
      .extend({ detected: retrieveResponse.shape.liveState.shape.detected.default(false) })
      .loose()
      .prefault({}),
  })
  .loose();

export type RetrievedFact = z.infer<typeof RetrievedFactSchema>;
export type RetrievedChunk = z.infer<typeof RetrievedChunkSchema>;
export type RetrieveResponse = z.infer<typeof RetrieveResponseSchema>;

/** A /retrieve request as the hooks send it (the contract's input type: defaults may be left out). */
export type RetrieveRequest = RetrieveRequestInput;

/**
 * One captured tool result: a Cortex `tool_result` ingest event, queued on disk as is and posted to /ingest.
 * A tool ran in the user's own session, so its output is the user's (scope user, owned by the principal);
 * the privacy level is left to Cortex's dimension policy default. The contract's event, narrowed: the hooks
 * always set the provenance key, the agent and the time, and never privacy, consent or dimensions.
 */
export const ToolResultEventSchema = toolResultEvent
  .omit({ privacy: true, consent: true, dimensions: true })
  .extend({
    provenanceKey: z.string().min(1).max(512),
    agentId: identifier,
    observedAt: z.string(),
    scope: z.literal("user"),
    owner: z.strictObject({ userId: identifier, householdId: identifier.optional() }),
  });

export type ToolResultEvent = z.infer<typeof ToolResultEventSchema>;

/** The /ingest body the drain posts: queued tool results, as the contract's input type. */
export function ingestBody(events: readonly ToolResultEvent[]): IngestRequestInput {
  return { events: [...events] };
}

export const IngestResponseSchema = ingestResponse
  .pick({ created: true, duplicates: true })
  .partial()
  .loose();

/** The /reflect body: the delta's fields with the principal beside them, as the contract's input type. */
export type ReflectBody = ReflectRequestInput;

/** A POST /remember body: an explicit save, as the contract's input type (explicit-save-reply.ts builds it). */
export type ExplicitSaveBody = ExplicitSaveRequestInput;

/**
 * What the hooks read of Cortex's answer to an explicit save, to tell the person what happened: the stored
 * statement and the page proposal. Enumerations read as strings; a proposal without a known shape reads as deferred.
 */
export const ExplicitSaveResponseSchema = explicitSaveResponse
  .pick({ id: true, status: true, statement: true, type: true, scope: true, proposal: true })
  .extend({
    status: z.string(),
    type: z.string(),
    scope: z.string(),
    proposal: z
      .looseObject({
        status: z.string(),
        id: z.string().optional(),
        artifactPath: z.string().optional(),
        title: z.string().optional(),
        createdNow: z.boolean().optional(),
        reason: z.string().optional(),
      })
      .catch({ status: "deferred" }),
  })
  .loose();
export type ExplicitSaveAnswer = z.infer<typeof ExplicitSaveResponseSchema>;
