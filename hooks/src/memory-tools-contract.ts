import {
  type ArchiveSearchRequestInput,
  archiveRecallResponse,
  archiveSearchResponse,
  archiveSummaryHit,
  memoryDocumentSchema,
  type TranscriptArchiveRequestInput,
} from "@remram/contract";
import { z } from "zod";

/**
 * What the memory tools and the transcript queue send to Cortex's archive and read back, from the contract's
 * schemas: requests as its input types, responses as lenient picks (unknown fields pass, enumerations read as
 * strings), as cortex-contract.ts does for the other routes.
 */

export type TranscriptBody = TranscriptArchiveRequestInput;
export type ArchiveSearchBody = ArchiveSearchRequestInput;

export const ArchiveSearchAnswerSchema = archiveSearchResponse
  .extend({
    results: z
      .array(
        archiveSummaryHit
          .pick({ hash: true, summary: true, createdAt: true, sourceChannel: true, consent: true })
          .extend({
            consent: archiveSummaryHit.shape.consent
              .extend({ privacy: z.string(), allowRecall: z.boolean().default(true) })
              .loose(),
          })
          .loose(),
      )
      .default([]),
  })
  .loose();
export type ArchiveSearchAnswer = z.infer<typeof ArchiveSearchAnswerSchema>;

const message = memoryDocumentSchema.shape.messages.element;

export const ArchiveRecallAnswerSchema = archiveRecallResponse
  .extend({
    document: memoryDocumentSchema
      .pick({ createdAt: true, source: true, messages: true })
      .extend({
        source: memoryDocumentSchema.shape.source.pick({ channel: true }).loose(),
        messages: z.array(message.pick({ role: true, content: true }).extend({ role: z.string() }).loose()),
      })
      .loose(),
  })
  .loose();
export type ArchiveRecallAnswer = z.infer<typeof ArchiveRecallAnswerSchema>;
