/**
 * /admin/export: everything Cortex holds that is a person's, read in pages from the knowledge and archive indices
 * (core/person-export.ts renders the Markdown). Owned means owned, as erasure reads it: knowledge whose owner is the
 * person (household items belong to the household and stay when a member leaves), transcripts whose owners include
 * them (other people's turns in a shared transcript are not theirs to take, so one they only wrote in stays out).
 */
import type { KnowledgeObject, PersonExport } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { scanFields } from "../knowledge/erasure.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { knowledgeObjectFields } from "../store/documents.js";
import type { IndexEntry } from "./service.js";

const transcriptFields = [
  "hash",
  "summary",
  "privacy",
  "allowRecall",
  "sourceSession",
  "sourceChannel",
  "createdAt",
  "archivedAt",
] as const;

export async function exportPerson(
  { store, clock }: Pick<CortexContext, "store" | "clock">,
  indices: MaturationIndices,
  userId: string,
): Promise<PersonExport> {
  const exportedAt = clock().toISOString();
  const knowledge: KnowledgeObject[] = [];
  const owned = { term: { "owner.userId": userId } };
  for await (const hits of scanFields<KnowledgeObject>(
    store,
    store.indices.knowledge,
    owned,
    knowledgeObjectFields,
  )) {
    knowledge.push(...hits.map((hit) => hit._source));
  }
  knowledge.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
  const transcripts: PersonExport["transcripts"] = [];
  type Fields = Pick<IndexEntry, (typeof transcriptFields)[number]>;
  const ownedTranscripts = { term: { ownerIds: userId } };
  for await (const hits of scanFields<Fields>(
    store,
    indices.archive,
    ownedTranscripts,
    transcriptFields,
    "hash",
  )) {
    transcripts.push(...hits.map((hit) => hit._source));
  }
  transcripts.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.hash.localeCompare(b.hash));
  return { userId, exportedAt, knowledge, transcripts };
}
