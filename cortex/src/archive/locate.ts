import type { CortexContext } from "../context.js";
import { lexicalQueryText } from "../core/queries.js";
import { request as storeRequest } from "../store/client.js";
import type { SearchResult } from "../store/reads.js";

/**
 * Which archived transcripts a query is about, found through their chunks (a summary names only the start of a
 * conversation; the chunks hold all of it): BM25 over the text of the person's own transcript chunks, and k-NN
 * too when the embedding model answers in time, fused by reciprocal rank into document hashes, best first. Only a
 * locator: the summary search still decides, by the index entry's owners and privacy, what is returned, and it
 * returns summaries, never chunk text.
 */

type Context = Pick<CortexContext, "store" | "embedder">;

const rankConstant = 60;

export async function locateTranscripts(
  { store, embedder }: Context,
  query: string,
  ownerIds: readonly string[],
  limit: number,
): Promise<string[]> {
  const filter = [
    { term: { sourceKind: "transcript" } },
    { term: { scope: "user" } },
    { terms: { "owner.userId": ownerIds } },
  ];
  const size = Math.min(200, limit * 5);
  const common = { size, _source: ["sourceId"], track_total_hits: false };
  const searches: Promise<string[]>[] = [
    hitsOf(store, {
      ...common,
      query: {
        bool: {
          must: { multi_match: { query: lexicalQueryText(query), fields: ["text", "title^0.5"] } },
          filter,
        },
      },
    }),
  ];
  if (embedder !== null) {
    searches.push(
      embedder.embedQuery(query).then(
        (vector) =>
          hitsOf(store, {
            ...common,
            query: { knn: { embedding: { vector, k: size, filter: { bool: { filter } } } } },
          }),
        // Lexical-only when the model is slow or down, as retrieval does.
        () => [],
      ),
    );
  }
  const scores = new Map<string, number>();
  for (const ranked of await Promise.all(searches)) {
    ranked.forEach((hash, rank) => {
      scores.set(hash, (scores.get(hash) ?? 0) + 1 / (rankConstant + rank + 1));
    });
  }
  return [...scores.entries()]
    .sort(([a, x], [b, y]) => y - x || (a < b ? -1 : 1))
    .slice(0, limit)
    .map(([hash]) => hash);
}

/** The documents a chunk search found, each once, in the order of its best chunk. */
async function hitsOf(store: Context["store"], body: Record<string, unknown>): Promise<string[]> {
  const { body: result } = await storeRequest<SearchResult<{ sourceId?: string }>>(
    store,
    "POST",
    `/${store.indices.chunks}/_search`,
    body,
  );
  const hashes: string[] = [];
  for (const hit of result.hits.hits) {
    const hash = hit._source.sourceId;
    if (typeof hash === "string" && !hashes.includes(hash)) hashes.push(hash);
  }
  return hashes;
}
