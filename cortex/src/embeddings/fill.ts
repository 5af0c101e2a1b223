/**
 * The fill job of a new embedding generation (store/generations.ts): every knowledge object that is not
 * invalidated gets a vector of the configured model in the new vectors index, every chunk its new embedding in
 * place; then the generation is marked complete and the old indices are deleted. It runs in the background after
 * start-up, a page at a time; what is written meanwhile is embedded by its writer, and a page's writes never
 * overwrite those (vectors are created, never replaced; chunk updates are conditional on the version read).
 * A failing model or OpenSearch pauses it (`waiting` says why) and it tries again; a restart resumes it, since
 * the generation stays incomplete until the end.
 */
import type { EmbeddingStatus, KnowledgeObject } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { erasureGate } from "../knowledge/erasure-gate.js";
import { loadObjects } from "../knowledge/repository.js";
import { request } from "../store/client.js";
import { chunkEmbeddingText, vectorDocument, vectorGateFields } from "../store/documents.js";
import type { Embedder } from "../store/embedder.js";
import { retirePreviousGenerations } from "../store/generations.js";
import type { EmbeddingIndices } from "../store/indices.js";
import { scanDocuments } from "../store/reads.js";
import { type BulkItemResult, bulk, bulkFailure } from "../store/writes.js";

export interface FillOptions {
  /** Items per page (embedded in one call, written in one bulk request). */
  pageSize: number;
  /** Pause after a failure before the page is tried again. */
  retryMs: number;
  onError: (error: unknown) => void;
  onDone: (retired: string[]) => void;
}

type Progress = { done: number; total: number };

const describe = (error: unknown) => (error instanceof Error ? error.message : String(error)).slice(0, 500);

/** A page's bulk items that failed for another reason than `expected` fail the page (it is tried again). */
function throwOnFailures(
  what: string,
  results: readonly BulkItemResult[],
  expected: readonly number[],
): void {
  const failed = results.filter((result) => result.error !== undefined && !expected.includes(result.status));
  if (failed.length > 0) {
    throw bulkFailure(
      `${what} write failed for ${failed.length} item(s): ${failed[0]?.error?.reason ?? ""}`,
      failed,
    );
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms).unref());

export class EmbeddingFill {
  private readonly objects: Progress = { done: 0, total: 0 };
  private readonly chunks: Progress = { done: 0, total: 0 };
  private startedAt: string | undefined;
  private finishedAt: string | undefined;
  private waiting: string | undefined;
  private stopped = false;
  private running: Promise<void> | undefined;

  constructor(
    private readonly context: Pick<CortexContext, "store" | "embedder" | "clock">,
    private readonly generations: EmbeddingIndices,
    private readonly options: FillOptions,
  ) {}

  /** Whether a generation waits for its fill. */
  get needed(): boolean {
    const { vectors, chunks } = this.generations;
    return vectors.embedding?.complete === false || chunks.embedding?.complete === false;
  }

  /**
   * Whether the fill is still at work: a generation waits, or the run is marking them complete and deleting the
   * old indices (reported "current" only once that is over, so a caller never finds the old indices still there).
   */
  private get filling(): boolean {
    return this.needed || (this.running !== undefined && this.finishedAt === undefined);
  }

  status(): EmbeddingStatus {
    const { embedder, store } = this.context;
    const { vectors, chunks } = this.generations;
    const replacing = vectors.embedding?.replacing ?? chunks.embedding?.replacing;
    const filling = this.filling;
    return {
      model: embedder?.model ?? null,
      dimensions: store.embedDimensions,
      state: embedder === null ? "none" : filling ? "reembedding" : "current",
      ...(filling && replacing !== undefined && { replacing }),
      ...(this.startedAt !== undefined && { startedAt: this.startedAt }),
      ...(this.finishedAt !== undefined && { finishedAt: this.finishedAt }),
      objects: { ...this.objects },
      chunks: { ...this.chunks },
      ...(this.waiting !== undefined && { waiting: this.waiting }),
    };
  }

  /** Start in the background when a generation needs it (no model: nothing can be embedded). */
  start(): void {
    const { embedder } = this.context;
    if (!this.needed || embedder === null || this.running !== undefined) return;
    this.startedAt = this.context.clock().toISOString();
    this.running = this.run(embedder);
  }

  /** Stop after the page in hand (the app closes); the generation stays incomplete for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  private async run(embedder: Embedder): Promise<void> {
    const { vectors, chunks } = this.generations;
    while (!this.stopped) {
      try {
        if (vectors.embedding?.complete === false) await this.fillObjects(embedder);
        if (chunks.embedding?.complete === false) await this.fillChunks(embedder);
        if (this.stopped) return;
        const retired: string[] = [];
        for (const generation of [vectors, chunks]) {
          if (generation.embedding?.complete !== false) continue;
          const { store } = this.context;
          retired.push(...(await retirePreviousGenerations(store, generation, generation.embedding)));
        }
        this.waiting = undefined;
        this.finishedAt = this.context.clock().toISOString();
        this.options.onDone(retired);
        return;
      } catch (error) {
        this.waiting = describe(error);
        this.options.onError(error);
        await sleep(this.options.retryMs);
      }
    }
  }

  /**
   * Vectors for the objects the new index lacks, made from their statements, pass after pass until one finds none
   * lacking: an object stored while the model could not embed (stored without a vector, after the pass's
   * snapshot) is caught by the next.
   */
  private async fillObjects(embedder: Embedder): Promise<void> {
    const { store } = this.context;
    const live = { bool: { must_not: { term: { status: "invalidated" } } } };
    let created = 1;
    while (created > 0 && !this.stopped) {
      created = 0;
      const { body } = await request<{ count: number }>(store, "POST", `/${store.indices.knowledge}/_count`, {
        query: live,
      });
      this.objects.total = body.count;
      this.objects.done = 0;
      for await (const hits of scanDocuments<KnowledgeObject>(store, store.indices.knowledge, live, {
        pageSize: this.options.pageSize,
        keepAlive: "15m",
      })) {
        if (this.stopped) return;
        const page = hits.map((hit) => hit._source);
        await this.untilDone(async () => {
          created += await erasureGate(store).shared("re-embedding", () => this.embedObjects(embedder, page));
        });
        this.objects.done += page.length;
      }
    }
    await request(store, "POST", `/${this.generations.vectors.index}/_refresh`);
  }

  /** Vectors for the page's objects that lack one; how many were created. */
  private async embedObjects(embedder: Embedder, page: readonly KnowledgeObject[]): Promise<number> {
    const { store } = this.context;
    const index = this.generations.vectors.index;
    const { body } = await request<{ docs: { _id: string; found: boolean }[] }>(
      store,
      "POST",
      `/${index}/_mget?_source=false`,
      { ids: page.map((object) => object.id) },
    );
    const present = new Set(body.docs.filter((doc) => doc.found).map((doc) => doc._id));
    const lacking = page.filter((object) => !present.has(object.id));
    if (lacking.length === 0) return 0;
    const made = await embedder.embedMany(lacking.map((object) => object.statement));
    const created = await bulk(
      store,
      lacking.flatMap((object, i) => [
        { create: { _index: index, _id: object.id } },
        vectorDocument(object, made[i] ?? [], embedder.model),
      ]),
      { timeoutMs: 120_000 },
    );
    // 409: its writer made the vector meanwhile, with this model.
    throwOnFailures("vector", created, [409]);
    // An object changed, invalidated or erased since the page was read keeps its vector in step: its writer
    // found no vector to update or delete, so the fill does it.
    const now = await loadObjects(
      store,
      lacking.map((object) => object.id),
    );
    const fixes = lacking.flatMap((read): unknown[] => {
      const object = now.get(read.id);
      if (object === undefined || object.status === "invalidated") {
        return [{ delete: { _index: index, _id: read.id } }];
      }
      const gate = vectorGateFields(object);
      if (JSON.stringify(gate) === JSON.stringify(vectorGateFields(read))) return [];
      return [{ update: { _index: index, _id: read.id, retry_on_conflict: 3 } }, { doc: gate }];
    });
    if (fixes.length > 0)
      throwOnFailures("vector gate", await bulk(store, fixes, { timeoutMs: 60_000 }), [404]);
    return created.filter((result) => result.status === 201).length;
  }

  /**
   * New embeddings for the chunks that lack this model's, written in place if nobody rewrote them since; passes
   * until none lacks one (a chunk stored while the model could not embed is caught by the next).
   */
  private async fillChunks(embedder: Embedder): Promise<void> {
    const { store } = this.context;
    const index = this.generations.chunks.index;
    const lacking = { bool: { must_not: { term: { embeddingModel: embedder.model } } } };
    const count = async () => {
      await request(store, "POST", `/${index}/_refresh`);
      const { body } = await request<{ count: number }>(store, "POST", `/${index}/_count`, {
        query: lacking,
      });
      return body.count;
    };
    type ChunkText = { title?: string; text: string };
    for (let left = await count(); left > 0 && !this.stopped; left = await count()) {
      this.chunks.total = left;
      this.chunks.done = 0;
      for await (const hits of scanDocuments<ChunkText>(store, index, lacking, {
        pageSize: this.options.pageSize,
        keepAlive: "15m",
      })) {
        if (this.stopped) return;
        await this.untilDone(async () => {
          const made = await embedder.embedMany(hits.map((hit) => chunkEmbeddingText(hit._source)));
          // A conflict (rewritten since: embedded by its writer) or a missing chunk (erased) is left as it is.
          const updated = await bulk(
            store,
            hits.flatMap((hit, i) => [
              {
                update: {
                  _index: index,
                  _id: hit._id,
                  if_seq_no: hit._seq_no,
                  if_primary_term: hit._primary_term,
                },
              },
              { doc: { embedding: made[i], embeddingModel: embedder.model } },
            ]),
            { timeoutMs: 120_000 },
          );
          throwOnFailures("chunk embedding", updated, [404, 409]);
        });
        this.chunks.done += hits.length;
      }
    }
  }

  /** Run one page until it succeeds (or the job stops), pausing after each failure. */
  private async untilDone(work: () => Promise<void>): Promise<void> {
    while (!this.stopped) {
      try {
        await work();
        this.waiting = undefined;
        return;
      } catch (error) {
        this.waiting = describe(error);
        this.options.onError(error);
        await sleep(this.options.retryMs);
      }
    }
  }
}
