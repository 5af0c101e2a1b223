import { z } from "zod";
import {
  consent,
  dimensions,
  identifier,
  isoTimestamp,
  knowledgeType,
  ownership,
  privacyLevel,
  scope,
  scopeOwnerProblem,
} from "./common.js";
import { claim, link } from "./knowledge.js";

/** Hard limits of one /ingest call; larger batches answer 413. */
export const ingestLimits = { maxEvents: 256, maxDocumentChars: 200_000, maxTextChars: 64_000 } as const;

export const ingestScopeMessage =
  "scope 'shared' is not written through ingest: shared knowledge comes from an approved promotion";
export const ingestPrincipleMessage = "type 'principle' is written only by dream";

/** Fields every ingest event carries: where it came from and who may see what it becomes. */
const eventBase = {
  provenanceKey: z
    .string()
    .min(1)
    .max(512)
    .optional()
    .describe("Idempotency key; derived from the event's identity and content when absent."),
  sessionId: identifier.optional(),
  agentId: identifier.optional(),
  channel: z.string().max(128).optional(),
  turnIds: z.array(z.string().min(1).max(128)).max(64).optional(),
  observedAt: isoTimestamp.optional(),
  scope,
  owner: ownership,
  privacy: privacyLevel.optional().describe("Defaults to the dimension policy's default level."),
  consent: consent.optional(),
  dimensions: dimensions.optional(),
};

export const knowledgeEvent = z
  .object({
    kind: z.literal("knowledge"),
    ...eventBase,
    statement: z.string().min(1).max(4000),
    type: knowledgeType,
    claim: claim.optional(),
    confidence: z.number().min(0).max(1).default(0.6),
    source: z.enum(["user", "tool", "reflection", "dream", "import"]).default("reflection"),
    validFrom: isoTimestamp.optional(),
    links: z.array(link).max(64).optional(),
  })
  .strict();

export const toolResultEvent = z
  .object({
    kind: z.literal("tool_result"),
    ...eventBase,
    tool: z.string().min(1).max(128),
    toolCallId: z.string().min(1).max(128).optional(),
    output: z.string().min(1).max(ingestLimits.maxTextChars),
  })
  .strict();

export const turnEvent = z
  .object({
    kind: z.literal("turn"),
    ...eventBase,
    role: z.enum(["user", "assistant"]),
    turnId: z.string().min(1).max(128),
    text: z.string().min(1).max(ingestLimits.maxTextChars),
  })
  .strict();

/** A whole transcript or artifact: split into an L0 summary, L1 sections and L2 passages. */
export const documentEvent = z
  .object({
    kind: z.literal("document"),
    ...eventBase,
    sourceKind: z.enum(["transcript", "artifact"]),
    sourceId: z.string().min(1).max(256),
    title: z.string().max(512).optional(),
    path: z.string().max(1024).optional(),
    text: z.string().min(1).max(ingestLimits.maxDocumentChars),
    summary: z.string().min(1).max(4000).optional().describe("L0 text; an extractive lead when absent."),
  })
  .strict();

export const ingestEvent = z
  .discriminatedUnion("kind", [knowledgeEvent, toolResultEvent, turnEvent, documentEvent])
  .superRefine((event, context) => {
    const problem = scopeOwnerProblem(event.scope, event.owner);
    if (problem !== undefined) context.addIssue({ code: "custom", path: ["owner"], message: problem });
    // Ingest writes what a session saw. Shared knowledge comes only from an approved promotion, principles only
    // from dream; a session could otherwise plant either for every user of the appliance.
    if (event.scope === "shared") {
      context.addIssue({ code: "custom", path: ["scope"], message: ingestScopeMessage });
    }
    if (event.kind === "knowledge" && event.type === "principle") {
      context.addIssue({ code: "custom", path: ["type"], message: ingestPrincipleMessage });
    }
  });
export type IngestEvent = z.infer<typeof ingestEvent>;

/** Batch size is checked by the route (413), so the schema accepts any length and names bad fields. */
export const ingestRequest = z.object({ events: z.array(ingestEvent).min(1) }).strict();
export type IngestRequest = z.infer<typeof ingestRequest>;
export type IngestRequestInput = z.input<typeof ingestRequest>;

export const ingestItemResult = z.object({
  index: z.int().min(0).describe("Position of the event in the request."),
  kind: z.enum(["knowledge", "tool_result", "turn", "document"]),
  status: z.enum(["created", "duplicate"]),
  provenanceKey: z.string(),
  ids: z.array(z.string()).describe("Stored knowledge object or chunk ids."),
  redactions: z.int().min(0),
});

export const ingestResponse = z.object({
  created: z.int().min(0),
  duplicates: z.int().min(0),
  embedded: z.boolean().describe("false when the embedding model was unreachable: stored lexical-only."),
  items: z.array(ingestItemResult),
});
export type IngestResponse = z.infer<typeof ingestResponse>;
