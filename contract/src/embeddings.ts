import { z } from "zod";
import { isoTimestamp } from "./common.js";

/**
 * Where Cortex's vectors stand (GET /admin/embeddings). Vectors of one embedding model mean nothing to another,
 * so a changed model re-embeds everything in the background: knowledge objects from their statements, chunks from
 * their text. Until an item has its new vector it is found by its words only; retrieval never mixes models.
 */
export const embeddingModelSpec = z.object({
  model: z.string(),
  dimensions: z.int().min(1),
});

const fillProgress = z.object({
  /** Items embedded (or found embedded already) so far. */
  done: z.int().min(0),
  /** Items to look at when the fill started; what is written meanwhile is embedded when it is written. */
  total: z.int().min(0),
});

export const embeddingStatus = z.object({
  /** The model Cortex embeds with; null when none is configured (retrieval is lexical only). */
  model: z.string().nullable(),
  dimensions: z.int().min(1),
  /**
   * current: every stored item has its vector of this model; reembedding: the fill job runs; starting: Cortex is
   * still setting up its indices (after a model change it copies the chunks into their new index first); none:
   * no model is configured.
   */
  state: z.enum(["starting", "current", "reembedding", "none"]),
  /** The model whose vectors are being replaced. */
  replacing: embeddingModelSpec.optional(),
  startedAt: isoTimestamp.optional(),
  finishedAt: isoTimestamp.optional(),
  objects: fillProgress,
  chunks: fillProgress,
  /** Why the fill is paused (the model still being pulled, Ollama down); it tries again by itself. */
  waiting: z.string().max(500).optional(),
});
export type EmbeddingStatus = z.output<typeof embeddingStatus>;
