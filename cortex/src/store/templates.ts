/**
 * Index templates Cortex owns, versioned. Each index is created from its template at start-up; a newer template
 * version adds its fields to the live index with a mapping update when the change is additive. A change OpenSearch
 * cannot make in place (a field's analyzer) rebuilds the knowledge index beside the live one (store/rebuild.ts).
 * The two indices holding vectors also follow the embedding model: another model's get a new generation beside
 * them (store/generations.ts).
 *
 * Knowledge objects keep their embeddings in an index of their own (`<prefix>-vectors`). Reflection, dream and
 * usage counters rewrite knowledge documents all the time (confidence, counters, links), and OpenSearch rewrites a
 * whole document on every update: with the vector inside, each update re-inserted it into the HNSW graph and
 * re-parsed 384 floats of _source. Measured on the 2-core test machine, 10,000 partial updates took 31 s with the
 * vector in the document and 2 s without, and a scan of 10,000 objects 9.8 s against 0.4 s. A vector document
 * changes only when the object's retrieval gate does (status, validity, privacy, consent), which is rare.
 */

/**
 * Bump when a template changes; `_meta.templateVersion` on the index records what it was built from.
 * 2: knowledge vectors moved to `<prefix>-vectors`. 3: `sensitivity` (contact details) joins the gate fields.
 * 4: statements and claim objects fold accents (`folded_english`), so "Tromso" finds "Tromsø".
 */
export const templateVersion = 4;

/**
 * A knowledge index built from a template version below this one cannot be brought up to date with a mapping
 * update (its analyzers changed): it is rebuilt into a new index and the alias moves (store/rebuild.ts).
 */
export const knowledgeRebuiltBelow = 4;

export interface IndexNames {
  knowledge: string;
  /** One document per embedded knowledge object: its vector and the gate fields the k-NN filter needs. */
  vectors: string;
  chunks: string;
  dimensions: string;
}

/** Stable alias names (what other modules use); the concrete index behind each is versioned. */
export function indexNames(prefix: string): IndexNames {
  return {
    knowledge: `${prefix}-knowledge`,
    vectors: `${prefix}-vectors`,
    chunks: `${prefix}-chunks`,
    dimensions: `${prefix}-dimensions`,
  };
}

/** The first index an alias names (a vector index of a later embedding generation is named by generations.ts). */
export function concreteIndex(alias: string): string {
  return `${alias}-v${templateVersion}`;
}

const keyword = { type: "keyword" } as const;
const date = { type: "date" } as const;
const english = { type: "text", analyzer: "english" } as const;

/** Single node: one shard, no replicas. Refresh every second keeps kNN segments few without hurting ingest. */
const settings = {
  index: { number_of_shards: 1, number_of_replicas: 0, refresh_interval: "1s", knn: true },
};

/**
 * OpenSearch's `english` analyzer rebuilt as a custom one with `asciifolding` after `lowercase`: a household
 * writes "Tromsø" and asks for "Tromso", or the other way round. An ASCII word is analysed exactly as before.
 */
const foldedEnglishAnalysis = {
  filter: {
    english_possessive: { type: "stemmer", language: "possessive_english" },
    english_stop: { type: "stop", stopwords: "_english_" },
    english_stemmer: { type: "stemmer", language: "english" },
  },
  analyzer: {
    folded_english: {
      type: "custom",
      tokenizer: "standard",
      filter: ["english_possessive", "lowercase", "asciifolding", "english_stop", "english_stemmer"],
    },
  },
};
const foldedEnglish = { type: "text", analyzer: "folded_english" } as const;

function vectorField(dimensions: number) {
  // The Lucene engine needs no native library (the k-NN default, FAISS, does); cosine suits MiniLM embeddings.
  return {
    type: "knn_vector",
    dimension: dimensions,
    method: {
      name: "hnsw",
      engine: "lucene",
      space_type: "cosinesimil",
      parameters: { m: 16, ef_construction: 128 },
    },
  };
}

/** What the retrieval gate filters on, apart from confidence (policy.ts); vector documents carry these too. */
const gateFields = {
  id: keyword,
  scope: keyword,
  owner: { properties: { userId: keyword, householdId: keyword } },
  privacy: keyword,
  consent: { properties: { retrieval: { type: "boolean" }, agents: keyword } },
  validity: { properties: { validFrom: date, invalidAt: date } },
  dimensionTags: keyword,
  /** Derived from the text on write (store/documents.ts): `contact` stays out of runs routed to a cloud model. */
  sensitivity: keyword,
} as const;

/** Fields knowledge objects and chunks share: governance, dimensions, counters, validity. */
function governedFields() {
  return {
    ...gateFields,
    provenance: {
      properties: {
        key: keyword,
        source: keyword,
        sessionId: keyword,
        agentId: keyword,
        channel: keyword,
        tool: keyword,
        sourceTurnIds: keyword,
        observedAt: date,
        ingestedAt: date,
      },
    },
    // The structured form is kept in _source; filters and overlap use the flattened tags.
    dimensions: { type: "object", enabled: false },
    dimensionValues: keyword,
    confidence: { type: "float" },
    usageCount: { type: "integer" },
    lastUsedAt: date,
    createdAt: date,
  };
}

/**
 * The index template for `<alias>-v*`: the settings, and mappings where unknown fields stay in _source unindexed
 * (reflection and dream can add bookkeeping freely) and `_meta` records the template version. No alias: Cortex
 * names the index its alias points at itself (store/indices.ts), so an index of a new embedding generation can be
 * built beside the live one before the alias moves (store/generations.ts).
 */
function indexTemplate(
  alias: string,
  properties: Record<string, unknown>,
  indexSettings: unknown = settings,
) {
  return {
    index_patterns: [`${alias}-v*`],
    priority: 100,
    template: {
      settings: indexSettings,
      mappings: { dynamic: false, _meta: { templateVersion, owner: "remram-cortex" }, properties },
    },
  };
}

export function knowledgeTemplate(alias: string) {
  return indexTemplate(
    alias,
    {
      ...governedFields(),
      statement: foldedEnglish,
      type: keyword,
      claim: { properties: { subject: keyword, predicate: keyword, object: foldedEnglish } },
      reinforcementCount: { type: "integer" },
      toolConfirmations: { type: "integer" },
      sessionIds: keyword,
      lastReinforcedAt: date,
      lastDecayedAt: date,
      userDirective: { type: "boolean" },
      links: { properties: { rel: keyword, targetId: keyword } },
      promotionState: keyword,
      status: keyword,
      updatedAt: date,
    },
    { index: { ...settings.index, analysis: foldedEnglishAnalysis } },
  );
}

export function chunkTemplate(alias: string, dimensions: number) {
  return indexTemplate(alias, {
    ...governedFields(),
    embedding: vectorField(dimensions),
    embeddingModel: keyword,
    sourceId: keyword,
    sourceKind: keyword,
    title: english,
    path: keyword,
    level: keyword,
    seq: { type: "integer" },
    text: english,
    parentId: keyword,
    prevId: keyword,
    nextId: keyword,
  });
}

/** Knowledge vectors: the k-NN graph and the gate fields its filter needs (knowledge index holds the rest). */
export function vectorsTemplate(alias: string, dimensions: number) {
  return indexTemplate(alias, {
    ...gateFields,
    type: keyword,
    status: keyword,
    embedding: vectorField(dimensions),
    embeddingModel: keyword,
  });
}

export function dimensionsTemplate(alias: string) {
  return indexTemplate(
    alias,
    {
      kind: keyword,
      name: keyword,
      occurrences: { type: "integer" },
      firstSeenAt: date,
      lastSeenAt: date,
      updatedAt: date,
    },
    { index: { number_of_shards: 1, number_of_replicas: 0 } },
  );
}
