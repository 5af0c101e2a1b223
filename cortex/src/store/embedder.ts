/**
 * Embeddings from Ollama through the `ollama` client: batched, with bounded concurrency, a per-call time limit
 * and a small cache of query vectors (the hooks ask the same question again on retries and follow-ups).
 */
import { Ollama } from "ollama";
import { QueryVectorCache } from "./query-vector-cache.js";

export interface Embedder {
  /** The model the vectors come from, as the vector indices record it. */
  readonly model: string;
  /** Vectors for many texts (ingest): batched, `concurrency` batches in flight. */
  embedMany(texts: readonly string[]): Promise<number[][]>;
  /** One query vector within the query time limit. */
  embedQuery(text: string): Promise<number[]>;
  /** Whether the model can be used: registered with Ollama, or loaded in process. */
  modelPresent(timeoutMs: number): Promise<boolean>;
}

export interface EmbedderOptions {
  url: string;
  model: string;
  dimensions: number;
  batchSize: number;
  concurrency: number;
  queryTimeoutMs: number;
  batchTimeoutMs?: number;
  /** Called with each call's duration in seconds (metrics). */
  observe?: (seconds: number, purpose: "query" | "ingest") => void;
}

function clientWithTimeout(host: string, timeoutMs: number): Ollama {
  return new Ollama({
    host,
    fetch: (input, init) => {
      const signals = [AbortSignal.timeout(timeoutMs), ...(init?.signal ? [init.signal] : [])];
      return fetch(input, { ...init, signal: AbortSignal.any(signals) });
    },
  });
}

/** Run `work` over `items` with at most `limit` calls in flight; results keep input order. */
export async function mapBounded<T, R>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<R>,
): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next;
      next += 1;
      results[index] = await work(items[index] as T);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/**
 * Ollama refuses an input longer than the model's context with this, `truncate: true` notwithstanding (seen with
 * MiniLM on transcript passages): the whole request fails, so one long chunk cost its whole batch its vectors.
 */
function exceedsContext(error: unknown): boolean {
  return /input length exceeds the context length/i.test(
    error instanceof Error ? error.message : String(error),
  );
}

/** The first half of a text, cut at a space where there is one: a passage's start is what retrieval matches best. */
export function firstHalf(text: string): string {
  const half = Math.floor(text.length / 2);
  const space = text.lastIndexOf(" ", half);
  return text.slice(0, space > half / 2 ? space : half);
}

export function createOllamaEmbedder(options: EmbedderOptions): Embedder {
  const queryClient = clientWithTimeout(options.url, options.queryTimeoutMs);
  const batchClient = clientWithTimeout(options.url, options.batchTimeoutMs ?? 60_000);
  const queryCache = new QueryVectorCache(512);

  const check = (vectors: number[][], expected: number): number[][] => {
    if (vectors.length !== expected)
      throw new Error(`embedding model returned ${vectors.length} vectors for ${expected} texts`);
    for (const vector of vectors) {
      if (vector.length !== options.dimensions) {
        throw new Error(
          `embedding model ${options.model} returned ${vector.length} dimensions, expected ${options.dimensions}`,
        );
      }
    }
    return vectors;
  };

  /**
   * Vectors for `batch`, in order. A batch refused for a text longer than the model's context is split in two until
   * the long text is alone, which is then embedded by its first half (again, until it fits).
   */
  const embedFitting = async (client: Ollama, batch: readonly string[]): Promise<number[][]> => {
    try {
      const response = await client.embed({ model: options.model, input: [...batch], truncate: true });
      return check(response.embeddings, batch.length);
    } catch (error) {
      if (!exceedsContext(error)) throw error;
      const [only] = batch;
      if (batch.length === 1 && only !== undefined) {
        if (only.length <= 32) throw error;
        return embedFitting(client, [firstHalf(only)]);
      }
      const middle = Math.ceil(batch.length / 2);
      return [
        ...(await embedFitting(client, batch.slice(0, middle))),
        ...(await embedFitting(client, batch.slice(middle))),
      ];
    }
  };

  return {
    model: options.model,
    async embedMany(texts) {
      const batches: string[][] = [];
      for (let start = 0; start < texts.length; start += options.batchSize) {
        batches.push(texts.slice(start, start + options.batchSize));
      }
      const results = await mapBounded(batches, options.concurrency, async (batch) => {
        const started = performance.now();
        const vectors = await embedFitting(batchClient, batch);
        options.observe?.((performance.now() - started) / 1000, "ingest");
        return vectors;
      });
      return results.flat();
    },
    async embedQuery(text) {
      const cached = queryCache.get(text);
      if (cached !== undefined) return cached;
      const started = performance.now();
      const [vector] = await embedFitting(queryClient, [text]);
      options.observe?.((performance.now() - started) / 1000, "query");
      if (vector === undefined) throw new Error("embedding model returned no vector");
      queryCache.set(text, vector);
      return vector;
    },
    async modelPresent(timeoutMs) {
      try {
        const client = clientWithTimeout(options.url, timeoutMs);
        const { models } = await client.list();
        return models.some(
          (model) => model.name === options.model || model.name === `${options.model}:latest`,
        );
      } catch {
        return false;
      }
    },
  };
}

/**
 * Vectors for `texts`, or nulls where there is no embedding model or it failed: a write never depends on the model.
 * The objects are stored lexical-only and dream backfills their vectors.
 */
export async function vectorsOrNulls(
  embedder: Embedder | null,
  texts: readonly string[],
): Promise<(number[] | null)[]> {
  if (embedder === null || texts.length === 0) return texts.map(() => null);
  try {
    return await embedder.embedMany(texts);
  } catch {
    return texts.map(() => null);
  }
}

/** One text's vector, or null (vectorsOrNulls). */
export async function vectorOrNull(embedder: Embedder | null, text: string): Promise<number[] | null> {
  return (await vectorsOrNulls(embedder, [text]))[0] ?? null;
}
