/**
 * Embeddings computed inside Cortex with ONNX Runtime (CORTEX_EMBED_RUNTIME=onnx): a sentence-transformers model
 * exported to ONNX (MiniLM, int8-quantized, by default), its tokenizer.json read by Hugging Face's tokenizers.js.
 * A query vector costs about 5 ms here where a call to Ollama costs about 60 on the same 2-core CPU (the HTTP round
 * trip and Ollama's runner), which was most of /retrieve's time with vectors (bench/results/embedding.json).
 *
 * The model folder holds model.onnx, tokenizer.json and embedding.json (its name, dimensions, token limit and
 * pooling); hack/install-embedding-onnx.sh makes it. Cutting and pooling are pure functions below.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Tokenizer } from "@huggingface/tokenizers";
import { env, InferenceSession, Tensor } from "onnxruntime-node";
import { z } from "zod";
import type { Embedder } from "./embedder.js";
import { QueryVectorCache } from "./query-vector-cache.js";

export const onnxModelManifest = z.object({
  /** What the vectors' index records as their model: a change of it re-embeds. */
  name: z.string().min(1).max(128),
  dimensions: z.int().min(8).max(4096),
  /** Tokens the model reads of a text ([CLS] and [SEP] included); the rest is cut. */
  maxTokens: z.int().min(8).max(8192),
  pooling: z.enum(["mean", "cls"]),
});
export type OnnxModelManifest = z.output<typeof onnxModelManifest>;

export interface OnnxEmbedderOptions {
  /** The model folder: model.onnx, tokenizer.json, embedding.json. */
  dir: string;
  /** The model and dimensions Cortex is configured with: they must be the folder's. */
  model: string;
  dimensions: number;
  /** Texts per observed ingest step (the embedding duration metric), as Ollama's batches are. */
  batchSize: number;
  /** ONNX Runtime's threads for one run (intra-op). */
  threads: number;
  queryTimeoutMs: number;
  observe?: (seconds: number, purpose: "query" | "ingest") => void;
}

/** A text cut to what can hold `maxTokens` tokens: tokenizing a whole transcript to keep 256 tokens is waste. */
export function textForTokens(text: string, maxTokens: number): string {
  const limit = maxTokens * 12;
  if (text.length <= limit) return text;
  const space = text.lastIndexOf(" ", limit);
  return text.slice(0, space > limit / 2 ? space : limit);
}

/** Token ids cut to `maxTokens`, keeping the closing special token ([SEP]) the model was trained to see. */
export function truncateIds(ids: readonly number[], maxTokens: number): number[] {
  if (ids.length <= maxTokens) return [...ids];
  return [...ids.slice(0, maxTokens - 1), ids[ids.length - 1] as number];
}

/**
 * One text's unit vector from the model's hidden states ([1, tokens, dimensions], row-major): the mean of its
 * tokens' states, or the first token's.
 */
export function poolTokens(
  hidden: ArrayLike<number>,
  tokens: number,
  dimensions: number,
  pooling: OnnxModelManifest["pooling"],
): number[] {
  const vector = new Float64Array(dimensions);
  const pooled = pooling === "cls" ? 1 : tokens;
  for (let token = 0; token < pooled; token += 1) {
    for (let d = 0; d < dimensions; d += 1)
      vector[d] = (vector[d] ?? 0) + (hidden[token * dimensions + d] ?? 0);
  }
  let norm = 0;
  for (let d = 0; d < dimensions; d += 1) norm += (vector[d] ?? 0) ** 2;
  norm = Math.sqrt(norm) || 1;
  return Array.from(vector, (value) => value / norm);
}

async function readManifest(dir: string): Promise<OnnxModelManifest> {
  const path = join(dir, "embedding.json");
  const parsed = onnxModelManifest.safeParse(JSON.parse(await readFile(path, "utf8")));
  if (!parsed.success) throw new Error(`${path} is not a model manifest: ${parsed.error.message}`);
  return parsed.data;
}

function withTimeout<T>(work: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what} took longer than ${ms} ms`)), ms);
  });
  return Promise.race([work, timeout]).finally(() => clearTimeout(timer));
}

/** Loads the model folder (a missing or mismatched model fails Cortex's start, naming the cause). */
export async function loadOnnxEmbedder(options: OnnxEmbedderOptions): Promise<Embedder> {
  const manifest = await readManifest(options.dir).catch((error: unknown) => {
    throw new Error(`the ONNX embedding model in ${options.dir} cannot be read: ${String(error)}`);
  });
  if (manifest.name !== options.model || manifest.dimensions !== options.dimensions) {
    throw new Error(
      `the ONNX embedding model in ${options.dir} is ${manifest.name} (${manifest.dimensions} dimensions); Cortex is configured for ${options.model} (${options.dimensions}): set CORTEX_EMBED_MODEL and CORTEX_EMBED_DIMENSIONS to the model's`,
    );
  }
  const tokenizer = new Tokenizer(
    JSON.parse(await readFile(join(options.dir, "tokenizer.json"), "utf8")),
    {},
  );
  // Errors only: on the image's read-only root ORT warns on stderr, outside Cortex's JSON log, that it cannot keep a
  // telemetry device id; its failures still reach Cortex as exceptions.
  env.logLevel = "error";
  const session = await InferenceSession.create(join(options.dir, "model.onnx"), {
    intraOpNumThreads: options.threads,
    interOpNumThreads: 1,
    graphOptimizationLevel: "all",
  });
  const needsTypeIds = session.inputNames.includes("token_type_ids");
  const output = session.outputNames[0];
  if (output === undefined) throw new Error(`${options.dir}/model.onnx has no output`);

  const encode = (text: string): number[] =>
    truncateIds(tokenizer.encode(textForTokens(text, manifest.maxTokens)).ids, manifest.maxTokens);

  /**
   * One text's vector, from a run of its own: the int8 model quantizes activations per run, so in a padded batch the
   * other texts would shift a text's vector (by about 0.006 in cosine) and the same text would not always get the
   * same vector. Batching gained little anyway: about 15 % more texts a second with 64 a run, measured on MiniLM.
   */
  const embed = async (text: string): Promise<number[]> => {
    const encoded = encode(text);
    const shape = [1, encoded.length];
    const feeds: Record<string, Tensor> = {
      input_ids: new Tensor("int64", BigInt64Array.from(encoded, BigInt), shape),
      attention_mask: new Tensor("int64", new BigInt64Array(encoded.length).fill(1n), shape),
    };
    if (needsTypeIds) feeds.token_type_ids = new Tensor("int64", new BigInt64Array(encoded.length), shape);
    const hidden = (await session.run(feeds))[output];
    if (hidden === undefined || hidden.dims.length !== 3 || hidden.dims[2] !== manifest.dimensions) {
      throw new Error(
        `the ONNX model answered ${JSON.stringify(hidden?.dims)}, not [1, tokens, ${manifest.dimensions}]`,
      );
    }
    return poolTokens(hidden.data as Float32Array, encoded.length, manifest.dimensions, manifest.pooling);
  };

  const cache = new QueryVectorCache(512);
  return {
    model: manifest.name,
    async embedMany(texts) {
      const vectors: number[][] = [];
      // One text at a time: a run already uses `threads` cores, and a query waits behind one text, not a batch.
      for (let start = 0; start < texts.length; start += options.batchSize) {
        const started = performance.now();
        for (const text of texts.slice(start, start + options.batchSize)) vectors.push(await embed(text));
        options.observe?.((performance.now() - started) / 1000, "ingest");
      }
      return vectors;
    },
    async embedQuery(text) {
      const cached = cache.get(text);
      if (cached !== undefined) return cached;
      const started = performance.now();
      const vector = await withTimeout(embed(text), options.queryTimeoutMs, "the query embedding");
      options.observe?.((performance.now() - started) / 1000, "query");
      cache.set(text, vector);
      return vector;
    },
    // The model is loaded with Cortex: it is present for as long as Cortex runs.
    modelPresent: async () => true,
  };
}
