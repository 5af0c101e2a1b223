import { z } from "zod";
import { isoTimestamp } from "./common.js";
import { knowledgeObject } from "./knowledge.js";

/**
 * A person's export: everything Cortex holds that is theirs, for them to keep or take elsewhere (the right to take
 * one's memory along). Their knowledge objects whole (invalidated and demoted ones included, so the history of a
 * correction comes along; household items belong to the household), and the summaries of the archived transcripts they own
 * (the full documents are one `GET /archive/:hash` each, where consent allows). Vectors, retrieval chunks and
 * artifact pages are derived from these and are not exported.
 */

export const personExportFormats = ["json", "markdown"] as const;

export const personExportRequest = z
  .object({
    userId: z.string().min(1).max(128),
    /** Who asked: the app may export only the requesting person's own data (requestedBy = userId). */
    requestedBy: z.string().min(1).max(256),
    format: z
      .enum(personExportFormats)
      .default("json")
      .describe("json: the records; markdown: the same, as a document a person reads."),
  })
  .strict();
export type PersonExportRequest = z.output<typeof personExportRequest>;

export const exportedTranscript = z.object({
  hash: z.string(),
  summary: z.string(),
  privacy: z.string(),
  allowRecall: z.boolean(),
  sourceSession: z.string(),
  sourceChannel: z.string(),
  createdAt: z.string(),
  archivedAt: z.string(),
});
export type ExportedTranscript = z.output<typeof exportedTranscript>;

export const personExport = z.object({
  userId: z.string(),
  exportedAt: isoTimestamp,
  knowledge: z.array(knowledgeObject),
  transcripts: z.array(exportedTranscript),
});
export type PersonExport = z.output<typeof personExport>;

export const personExportResponse = z.discriminatedUnion("format", [
  personExport.extend({ format: z.literal("json") }),
  z.object({
    format: z.literal("markdown"),
    markdown: z.string(),
    counts: z.object({ knowledge: z.int(), transcripts: z.int() }),
  }),
]);
export type PersonExportResponse = z.output<typeof personExportResponse>;
