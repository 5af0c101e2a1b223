/**
 * The documents Cortex stores for knowledge objects and chunks: the schema object plus the flattened dimension
 * fields filters and facets use, and the vector documents the k-NN gate filters on.
 */

import { type Chunk, type KnowledgeObject, knowledgeObject } from "@remram/contract";
import { type SensitivityMarker, sensitivityOf } from "../core/contacts.js";
import { dimensionTags } from "../core/ingest-plan.js";
import type { IndexNames } from "./templates.js";

/**
 * What the retrieval gate must know about an item's text: `contact` when it holds contact details (kept only in a
 * user's own items), which runs routed to a cloud model never see. Derived from the text on every write, so the
 * marker cannot fall out of step with what is stored. Dimension values count too: redaction replaces contact
 * details there (core/redaction.ts `redactDimensions`), but an item stored before it did may still hold one.
 */
export function sensitivityFields(item: KnowledgeObject | Chunk): { sensitivity: SensitivityMarker[] } {
  const values = Object.values(item.dimensions).flat();
  if ("statement" in item) {
    const { claim } = item;
    return {
      sensitivity: sensitivityOf(item.statement, claim?.subject, claim?.predicate, claim?.object, ...values),
    };
  }
  return { sensitivity: sensitivityOf(item.text, item.title, ...values) };
}

/** The schema object plus the flattened dimension fields filters and facets use, and its sensitivity. */
function withDimensionFields<T extends KnowledgeObject | Chunk>(
  item: T,
): T & { dimensionTags: string[]; dimensionValues: string[]; sensitivity: SensitivityMarker[] } {
  const tags = dimensionTags(item.dimensions);
  return {
    ...item,
    dimensionTags: tags,
    dimensionValues: [...new Set(tags.map((tag) => tag.slice(tag.indexOf(":") + 1)))].sort(),
    ...sensitivityFields(item),
  };
}

/**
 * The stored knowledge object's own fields, to read it without the derived ones (and without the embedding that
 * documents from before vectors moved out still carry).
 */
export const knowledgeObjectFields = Object.keys(knowledgeObject.shape);

/** A stored knowledge object; its vector is a document of its own in the vectors index. */
export function knowledgeDocument(
  object: KnowledgeObject,
): ReturnType<typeof withDimensionFields<KnowledgeObject>> {
  return withDimensionFields(object);
}

/** What a chunk's embedding is made from: its title, when it has one, above its text. */
export function chunkEmbeddingText(chunk: { title?: string | undefined; text: string }): string {
  return chunk.title === undefined ? chunk.text : `${chunk.title}\n${chunk.text}`;
}

/** A stored chunk, with its embedding (chunks are written once and rarely updated). */
export function chunkDocument(
  chunk: Chunk,
  embedding: readonly number[] | null,
  embeddingModel: string | null,
): ReturnType<typeof withDimensionFields<Chunk>> & {
  embedding?: readonly number[];
  embeddingModel: string | null;
} {
  return {
    ...withDimensionFields(chunk),
    ...(embedding !== null && { embedding }),
    embeddingModel: embedding === null ? null : embeddingModel,
  };
}

/** The fields of a knowledge object the k-NN gate filters on (everything in the gate but confidence). */
export function vectorGateFields(object: KnowledgeObject) {
  return {
    id: object.id,
    type: object.type,
    status: object.status,
    scope: object.scope,
    owner: object.owner,
    privacy: object.privacy,
    consent: object.consent,
    validity: object.validity,
    dimensionTags: dimensionTags(object.dimensions),
    ...sensitivityFields(object),
  };
}

/** The stored names of those fields, to read a vector document's gate without its embedding. */
export const vectorGateFieldNames = [
  "id",
  "type",
  "status",
  "scope",
  "owner",
  "privacy",
  "consent",
  "validity",
  "dimensionTags",
  "sensitivity",
] as const satisfies readonly (keyof ReturnType<typeof vectorGateFields>)[];

/** Whether an update changes what the k-NN gate sees, so the vector document must be rewritten too. */
export function gateChanged(before: KnowledgeObject, after: KnowledgeObject): boolean {
  return JSON.stringify(vectorGateFields(before)) !== JSON.stringify(vectorGateFields(after));
}

export function vectorDocument(
  object: KnowledgeObject,
  embedding: readonly number[],
  embeddingModel: string | null,
) {
  return { ...vectorGateFields(object), embedding, embeddingModel };
}

/**
 * Bulk lines writing a knowledge object and, when it has one, its vector. `create` never overwrites an existing
 * id (ingest's idempotency); `index` replaces.
 */
export function knowledgeWriteLines(
  indices: Pick<IndexNames, "knowledge" | "vectors">,
  op: "create" | "index",
  object: KnowledgeObject,
  embedding: readonly number[] | null,
  embeddingModel: string | null,
): unknown[] {
  const lines: unknown[] = [
    { [op]: { _index: indices.knowledge, _id: object.id } },
    knowledgeDocument(object),
  ];
  if (embedding !== null) {
    lines.push(
      { [op]: { _index: indices.vectors, _id: object.id } },
      vectorDocument(object, embedding, embeddingModel),
    );
  }
  return lines;
}
