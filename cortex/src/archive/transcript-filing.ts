import type { TranscriptArchiveRequest, TranscriptArchiveResponse } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { gone } from "../http-errors.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { refusalMessage, refusedWrites } from "../knowledge/tombstones.js";
import { chunkDocument } from "../store/documents.js";
import { createDocuments } from "../store/writes.js";
import { redactDocument } from "./document.js";
import { archiveDocument } from "./service.js";
import type { ArchiveStore } from "./store.js";
import { transcriptChunks, transcriptDocument, transcriptSummary } from "./transcript.js";

/**
 * POST /archive/transcripts: a finished session into the archive and into retrieval. The document is redacted
 * first; its summary and chunks are made from what is kept, so archive, index and chunks say the same. The
 * archive write comes first: a chunk must never cite a hash the archive lacks. A resend (the hooks retry after a
 * lost answer) stores nothing new: the same bytes hash the same, the chunks' ids derive from the hash.
 */

type Context = Pick<CortexContext, "store" | "clock" | "embedder">;

export async function fileTranscript(
  context: Context,
  where: MaturationIndices,
  archive: () => Promise<ArchiveStore>,
  request: TranscriptArchiveRequest,
  onEmbeddingError: (error: unknown) => void,
): Promise<TranscriptArchiveResponse> {
  const { store, embedder } = context;
  const now = context.clock().toISOString();
  const document = redactDocument(transcriptDocument(request));
  const summary = transcriptSummary(document);
  const filed = await archiveDocument(context, where, archive, { document, summary });
  const chunks = transcriptChunks(document, filed.hash, summary, request.principal, now);
  let vectors: number[][] | null = null;
  if (embedder !== null && chunks.length > 0) {
    try {
      vectors = await embedder.embedMany(
        chunks.map((chunk) => (chunk.title === undefined ? chunk.text : `${chunk.title}\n${chunk.text}`)),
      );
    } catch (error) {
      // Stored lexical-only rather than refused, as ingest does: the archive write must not hang on a model.
      onEmbeddingError(error);
    }
  }
  // An erasure may have landed while the chunks were embedded: the archive write checked before, this checks again.
  const refused = await refusedWrites(store, [
    { userId: request.principal.userId, observedAt: document.createdAt, at: "principal" },
  ]);
  if (refused.length > 0) throw gone(refusalMessage(refused));
  const model = embedder?.model ?? null;
  const outcomes = await createDocuments(
    store,
    chunks.map((chunk, position) => ({
      index: store.indices.chunks,
      id: chunk.id,
      document: chunkDocument(chunk, vectors?.[position] ?? null, model),
    })),
  );
  const created = outcomes.filter((outcome) => outcome === "created").length;
  return {
    hash: filed.hash,
    stored: filed.stored,
    coordinates: filed.coordinates,
    summary,
    chunks: { ids: chunks.map((chunk) => chunk.id), created, duplicates: outcomes.length - created },
    embedded: vectors !== null || chunks.length === 0,
  };
}
