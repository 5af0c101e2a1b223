/**
 * Embedding generations of the two indices that hold vectors (knowledge vectors and chunks). Vectors of one model
 * mean nothing to another, and an index's vector dimension is fixed, so a changed embedding model gets indices of
 * its own beside the old ones: the knowledge vectors start empty (they are made again from the knowledge index),
 * the chunks are copied without their vectors (the chunk index is the only home of their text). The alias moves to
 * the new index at once; a fill job (embeddings/) embeds what the new index lacks and marks it complete, and only
 * then are the old indices deleted. Each index records its generation in its mapping's `_meta.embedding`.
 */
import { createHash } from "node:crypto";
import { type CortexStore, request } from "./client.js";
import { templateVersion } from "./templates.js";

export interface EmbeddingSpec {
  model: string;
  dimensions: number;
}

export interface IndexEmbedding extends EmbeddingSpec {
  /** False while the fill job has not embedded everything the index should hold. */
  complete: boolean;
  /** The generation this one replaces, until it is complete. */
  replacing?: EmbeddingSpec;
}

/** What start-up found and did for one index that holds vectors. */
export interface GenerationState {
  alias: string;
  /** The index the alias names now. */
  index: string;
  /** Null when no model has embedded anything in it yet and none is configured. */
  embedding: IndexEmbedding | null;
}

interface StoredMapping {
  _meta?: { templateVersion?: number; owner?: string; embedding?: IndexEmbedding };
  properties?: { embedding?: { dimension?: number } };
}

export function sameEmbedding(a: EmbeddingSpec, b: EmbeddingSpec): boolean {
  return a.model === b.model && a.dimensions === b.dimensions;
}

/** The index of a later generation: `<alias>-v<template>-e<digest of model and dimensions>`. */
export function generationIndex(alias: string, embedding: EmbeddingSpec): string {
  const digest = createHash("sha256").update(`${embedding.model}\n${embedding.dimensions}`).digest("hex");
  return `${alias}-v${templateVersion}-e${digest.slice(0, 10)}`;
}

/**
 * The indices an alias names (none when it does not exist). Asked as `/<alias>/_alias`, scoped to the alias: an
 * external cluster's role limited to Cortex's indices refuses the cluster-wide `/_alias/<name>`.
 */
export async function aliasedIndices(store: CortexStore, alias: string): Promise<string[]> {
  const { statusCode, body } = await request<Record<string, { aliases?: Record<string, unknown> }>>(
    store,
    "GET",
    `/${alias}/_alias/${alias}`,
    undefined,
    { ignore: [404] },
  );
  if (statusCode === 404) return [];
  return Object.entries(body)
    .filter(([, index]) => index.aliases?.[alias] !== undefined)
    .map(([index]) => index)
    .sort();
}

export async function readMapping(store: CortexStore, index: string): Promise<StoredMapping> {
  const { body } = await request<Record<string, { mappings?: StoredMapping }>>(
    store,
    "GET",
    `/${index}/_mapping`,
  );
  return body[index]?.mappings ?? {};
}

/** Record the generation in the index's `_meta` (a mapping update replaces `_meta` whole). */
export async function writeEmbeddingMeta(
  store: CortexStore,
  index: string,
  embedding: IndexEmbedding,
): Promise<void> {
  await request(store, "PUT", `/${index}/_mapping`, {
    _meta: { templateVersion, owner: "remram-cortex", embedding },
  });
}

/**
 * The generation of an index from before generations were recorded: its mapping's dimension and the model its
 * stored vectors name (every vector document and embedded chunk carries `embeddingModel`); an index without any
 * vector yet is taken to be the configured model's.
 */
async function inferredEmbedding(
  store: CortexStore,
  index: string,
  mapping: StoredMapping,
  configured: EmbeddingSpec,
): Promise<IndexEmbedding> {
  const { body } = await request<{ hits: { hits: { _source?: { embeddingModel?: string | null } }[] } }>(
    store,
    "POST",
    `/${index}/_search`,
    { size: 1, _source: ["embeddingModel"], query: { exists: { field: "embeddingModel" } } },
  );
  const model = body.hits.hits[0]?._source?.embeddingModel ?? configured.model;
  const dimensions = mapping.properties?.embedding?.dimension ?? configured.dimensions;
  return { model, dimensions, complete: true };
}

/**
 * Make `alias` name an index of the configured generation. A fresh store gets `<alias>-v<template>`; an index of
 * the configured model is kept (and told its generation when it predates them); an index of another model is
 * replaced by a new generation's, created here from the (already updated) template, and `adopt` moves the alias:
 * it is given the old index and the new one. `addMappings` brings a kept index up to the current template.
 * Without a configured model (no Ollama) nothing is embedded, so whatever generation is there stays.
 */
export async function ensureGeneration(
  store: CortexStore,
  alias: string,
  configured: EmbeddingSpec | null,
  firstIndex: string,
  hooks: {
    addMappings: (index: string) => Promise<void>;
    adopt: (from: string, to: string) => Promise<void>;
  },
): Promise<GenerationState> {
  const [current] = await aliasedIndices(store, alias);
  if (current === undefined) {
    await request(
      store,
      "PUT",
      `/${firstIndex}`,
      { aliases: { [alias]: {} } },
      { ignore: [400], retries: 2 },
    );
    if (configured === null) return { alias, index: firstIndex, embedding: null };
    const embedding = { ...configured, complete: true };
    await writeEmbeddingMeta(store, firstIndex, embedding);
    return { alias, index: firstIndex, embedding };
  }
  const mapping = await readMapping(store, current);
  const outdated = (mapping._meta?.templateVersion ?? 0) < templateVersion;
  if (outdated) await hooks.addMappings(current);
  const recorded = mapping._meta?.embedding;
  if (configured === null) {
    if (outdated && recorded !== undefined) await writeEmbeddingMeta(store, current, recorded);
    return { alias, index: current, embedding: recorded ?? null };
  }
  const embedding = recorded ?? (await inferredEmbedding(store, current, mapping, configured));
  if (sameEmbedding(embedding, configured)) {
    // An interrupted copy may have left the write block on an index a reverted model change kept.
    await request(store, "PUT", `/${current}/_settings`, { "index.blocks.write": null });
    if (recorded === undefined || outdated) await writeEmbeddingMeta(store, current, embedding);
    return { alias, index: current, embedding };
  }
  const target = generationIndex(alias, configured);
  // A leftover of an interrupted change to this same model is rebuilt from scratch.
  await request(store, "DELETE", `/${target}`, undefined, { ignore: [404] });
  await request(store, "PUT", `/${target}`, undefined, { retries: 2 });
  const next = {
    ...configured,
    complete: false,
    replacing: { model: embedding.model, dimensions: embedding.dimensions },
  };
  await writeEmbeddingMeta(store, target, next);
  await hooks.adopt(current, target);
  return { alias, index: target, embedding: next };
}

/** Point `alias` at `to` instead of `from`, in one atomic step. */
export async function moveAlias(store: CortexStore, alias: string, from: string, to: string): Promise<void> {
  await request(store, "POST", "/_aliases", {
    actions: [{ remove: { index: from, alias } }, { add: { index: to, alias } }],
  });
}

/**
 * Copy every document of `from` into `to` without its vector (another model's, of another dimension), then move
 * the alias. Writes to `from` are blocked first, so nothing written meanwhile is left behind; Cortex holds its
 * own writes until start-up is done anyway, and the block stays on the old index until it is deleted.
 */
export async function copyWithoutVectors(
  store: CortexStore,
  alias: string,
  from: string,
  to: string,
): Promise<number> {
  await request(store, "PUT", `/${from}/_settings`, { "index.blocks.write": true });
  const { body } = await request<{ total?: number; failures?: unknown[] }>(
    store,
    "POST",
    "/_reindex?refresh=true&wait_for_completion=true",
    {
      source: { index: from, size: 1_000 },
      dest: { index: to },
      script: {
        lang: "painless",
        source: "ctx._source.remove('embedding'); ctx._source.embeddingModel = null;",
      },
    },
    { timeoutMs: 30 * 60_000 },
  );
  if ((body.failures ?? []).length > 0) {
    throw new Error(`copying ${from} into ${to} failed: ${JSON.stringify(body.failures?.[0]).slice(0, 500)}`);
  }
  await moveAlias(store, alias, from, to);
  return body.total ?? 0;
}

/** Mark the generation complete and delete the generations before it (what `alias` no longer names). */
export async function retirePreviousGenerations(
  store: CortexStore,
  state: GenerationState,
  done: IndexEmbedding,
): Promise<string[]> {
  const { replacing: _, ...spec } = done;
  const embedding = { ...spec, complete: true };
  await writeEmbeddingMeta(store, state.index, embedding);
  state.embedding = embedding;
  const { body } = await request<{ index: string }[]>(
    store,
    "GET",
    `/_cat/indices/${state.alias}-v*?format=json&h=index`,
  );
  const retired = body.map((row) => row.index).filter((index) => index !== state.index);
  for (const index of retired) await request(store, "DELETE", `/${index}`, undefined, { ignore: [404] });
  return retired;
}
