import type { KnowledgeObject } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { scopeOf } from "../knowledge/mapping.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { cosineFromScore, loadVectors, scopeFilter } from "../knowledge/repository.js";
import { vectorDocument } from "../store/documents.js";
import { multiSearch } from "../store/reads.js";
import { bulk } from "../store/writes.js";
import { type NeighbourList, neighbourListFrom, neighboursPerObject } from "./neighbours.js";

/** Objects per k-NN multi-search. */
const neighbourBatch = 64;

export interface NeighbourLookup {
  /** The objects to look up, in this order. */
  ids: readonly string[];
  stored: ReadonlyMap<string, { object: KnowledgeObject }>;
  /** No batch starts after this time (epoch milliseconds). */
  deadline: number;
  now: string;
  /** Told the number of lists built so far after each batch. */
  onBuilt: (count: number) => void;
}

/**
 * k-NN lists for `ids`, in that order, until the deadline: a batch's vectors are read (and, for objects stored
 * without one, made when a model is there), looked up in one multi-search within each object's own scope, and
 * the lists stored. What the deadline leaves is looked up by a later cycle.
 */
export async function lookUpNeighbours(
  { store, embedder }: Pick<CortexContext, "store" | "embedder">,
  indices: MaturationIndices,
  { ids, stored, deadline, now, onBuilt }: NeighbourLookup,
): Promise<{ built: NeighbourList[]; vectorsBackfilled: number }> {
  const built: NeighbourList[] = [];
  let vectorsBackfilled = 0;
  let canEmbed = embedder !== null;
  for (let start = 0; start < ids.length && Date.now() < deadline; start += neighbourBatch) {
    const batch = ids.slice(start, start + neighbourBatch).flatMap((id) => {
      const object = stored.get(id)?.object;
      return object ? [object] : [];
    });
    const vectors = await loadVectors(
      store,
      batch.map((o) => o.id),
    );
    const lacking = batch.filter((object) => !vectors.has(object.id));
    const lists: NeighbourList[] = [];
    if (lacking.length > 0 && embedder !== null && canEmbed) {
      // Stored while the model was down: embed now, so the object takes part in semantic retrieval and dream.
      try {
        const made = await embedder.embedMany(lacking.map((o) => o.statement));
        await bulk(
          store,
          lacking.flatMap((object, i) => {
            const vector = made[i];
            if (vector === undefined) return [];
            vectors.set(object.id, vector);
            return [
              { index: { _index: store.indices.vectors, _id: object.id } },
              vectorDocument(object, vector, embedder.model),
            ];
          }),
          { refresh: "true", timeoutMs: 60_000 },
        );
        vectorsBackfilled += made.length;
      } catch {
        canEmbed = false;
      }
    } else if (embedder === null) {
      for (const object of lacking)
        lists.push({ id: object.id, computedAt: now, vector: false, neighbours: [] });
    }
    const searched = batch.filter((object) => vectors.has(object.id));
    const responses = await multiSearch<never>(
      store,
      searched.map((object) => ({
        index: store.indices.vectors,
        body: {
          size: neighboursPerObject + 1,
          _source: false,
          query: {
            knn: {
              embedding: {
                vector: vectors.get(object.id),
                k: neighboursPerObject + 1,
                filter: {
                  bool: { filter: [...scopeFilter(scopeOf(object)), { term: { status: "active" } }] },
                },
              },
            },
          },
        },
      })),
      30_000,
    );
    responses.forEach((response, i) => {
      const object = searched[i];
      if (!object || response.error) return;
      const hits = response.hits.hits.map((hit) => ({
        id: hit._id,
        similarity: cosineFromScore(hit._score ?? 0),
      }));
      lists.push(neighbourListFrom(object.id, hits, now));
    });
    if (lists.length > 0) {
      await bulk(
        store,
        lists.flatMap((list) => [{ index: { _index: indices.neighbours, _id: list.id } }, list]),
        { timeoutMs: 60_000 },
      );
    }
    built.push(...lists);
    onBuilt(built.length);
  }
  return { built, vectorsBackfilled };
}
