import type { KnowledgeObject } from "../schemas/knowledge.js";
import {
  type CortexStore,
  multiSearch,
  request,
  type SearchResult,
  toIndexDocument,
} from "../store/opensearch.js";
import type { Claim, Scope } from "./knowledge.js";
import { normaliseClaimPart } from "./knowledge.js";

/**
 * The knowledge-index side of reflection and dream: candidate lookups (same claim, nearest neighbours in one
 * scope), reads by id, paged scans and writes that keep the stored embedding of updated objects.
 */

export type StoredKnowledge = KnowledgeObject & { embedding?: number[] };

/** Hits of a lookup: the object and, for k-NN hits, its cosine similarity to the query vector. */
export interface CandidateHit {
  object: KnowledgeObject;
  similarity?: number;
}

const withoutEmbedding = { excludes: ["embedding"] };
const writeBatch = 1000;

/** The filter selecting objects stored in exactly this scope. */
export function scopeFilter(scope: Scope): unknown[] {
  const clauses: unknown[] = [{ term: { scope: scope.kind } }];
  if (scope.kind === "user") clauses.push({ term: { "owner.userId": scope.ownerIds[0] ?? "" } });
  if (scope.kind === "household") clauses.push({ term: { "owner.householdId": scope.ownerIds[0] ?? "" } });
  return clauses;
}

/** Stored claims are written normalised, so an exact keyword lookup finds them. */
export function normaliseClaim(claim: Claim): Claim {
  return {
    subject: normaliseClaimPart(claim.subject),
    predicate: normaliseClaimPart(claim.predicate),
    object: claim.object.trim(),
  };
}

/** Lucene's cosine score is (1 + cos) / 2. */
export function cosineFromScore(score: number): number {
  return 2 * score - 1;
}

export interface CandidateQuery {
  scope: Scope;
  claim?: { subject: string; predicate: string } | undefined;
  vector?: readonly number[] | undefined;
}

/**
 * For each query, objects in its scope that are not invalidated and share the claim's subject and predicate,
 * plus its `k` nearest neighbours by embedding. One round trip for all queries.
 */
export async function findCandidates(
  store: CortexStore,
  queries: readonly CandidateQuery[],
  k: number,
  timeoutMs = 10_000,
): Promise<CandidateHit[][]> {
  const searches: { index: string; body: unknown; query: number; knn: boolean }[] = [];
  queries.forEach((query, index) => {
    const filter = [...scopeFilter(query.scope), { bool: { must_not: { term: { status: "invalidated" } } } }];
    if (query.claim) {
      searches.push({
        index: store.indices.knowledge,
        query: index,
        knn: false,
        body: {
          size: 50,
          _source: withoutEmbedding,
          query: {
            bool: {
              filter: [
                ...filter,
                { term: { "claim.subject": normaliseClaimPart(query.claim.subject) } },
                { term: { "claim.predicate": normaliseClaimPart(query.claim.predicate) } },
              ],
            },
          },
          sort: [{ id: "asc" }],
        },
      });
    }
    if (query.vector) {
      searches.push({
        index: store.indices.knowledge,
        query: index,
        knn: true,
        body: {
          size: k,
          _source: withoutEmbedding,
          query: { knn: { embedding: { vector: query.vector, k, filter: { bool: { filter } } } } },
        },
      });
    }
  });
  const responses = await multiSearch<KnowledgeObject>(store, searches, timeoutMs);
  const results: Map<string, CandidateHit>[] = queries.map(() => new Map());
  responses.forEach((response, i) => {
    const search = searches[i];
    if (!search) return;
    if (response.error) throw new Error(`candidate lookup failed: ${response.error.reason}`);
    const found = results[search.query] as Map<string, CandidateHit>;
    for (const hit of response.hits.hits) {
      const similarity = search.knn && hit._score !== null ? cosineFromScore(hit._score) : undefined;
      const previous = found.get(hit._id);
      found.set(hit._id, { object: hit._source, similarity: similarity ?? previous?.similarity });
    }
  });
  return results.map((found) => [...found.values()]);
}

/** Objects by id, whatever their scope; callers check scope themselves. */
export async function loadObjects(
  store: CortexStore,
  ids: readonly string[],
  withEmbedding = false,
): Promise<Map<string, StoredKnowledge>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const { body } = await request<{ docs: { _id: string; found: boolean; _source?: StoredKnowledge }[] }>(
    store,
    "POST",
    `/${store.indices.knowledge}/_mget${withEmbedding ? "" : "?_source_excludes=embedding"}`,
    { ids: unique },
  );
  return new Map(
    body.docs.filter((d) => d.found && d._source).map((d) => [d._id, d._source as StoredKnowledge]),
  );
}

/**
 * Every object matching `query`, paged by id with search_after (a dream cycle reads the whole live set;
 * at 100k objects that is 100 pages of 1,000).
 */
export async function* scanObjects(
  store: CortexStore,
  query: unknown,
  options: { pageSize?: number; withEmbedding?: boolean } = {},
): AsyncGenerator<StoredKnowledge[]> {
  let after: unknown[] | undefined;
  for (;;) {
    const { body } = await request<
      SearchResult<StoredKnowledge> & { hits: { hits: { sort?: unknown[] }[] } }
    >(
      store,
      "POST",
      `/${store.indices.knowledge}/_search`,
      {
        size: options.pageSize ?? 1000,
        query,
        sort: [{ id: "asc" }],
        _source: options.withEmbedding ? true : withoutEmbedding,
        track_total_hits: false,
        ...(after !== undefined && { search_after: after }),
      },
      { timeoutMs: 60_000 },
    );
    const hits = body.hits.hits;
    if (hits.length === 0) return;
    yield hits.map((hit) => hit._source);
    after = hits[hits.length - 1]?.sort;
  }
}

/**
 * Write objects: new ones are indexed whole with their embedding; updated ones are partial updates, so their
 * stored embedding stays. Waits until the writes are searchable.
 */
export async function writeObjects(
  store: CortexStore,
  created: readonly {
    object: KnowledgeObject;
    embedding: readonly number[] | null;
    embeddingModel: string | null;
  }[],
  updated: readonly KnowledgeObject[],
): Promise<void> {
  // Bounded bulk bodies: a full dream cycle may rewrite every object.
  const lines: unknown[][] = [];
  for (const { object, embedding, embeddingModel } of created) {
    lines.push([
      { index: { _index: store.indices.knowledge, _id: object.id } },
      toIndexDocument(object, embedding, embeddingModel),
    ]);
  }
  for (const object of updated) {
    const { embeddingModel: _keepStoredModel, ...doc } = toIndexDocument(object, null, null);
    lines.push([
      { update: { _index: store.indices.knowledge, _id: object.id, retry_on_conflict: 3 } },
      { doc },
    ]);
  }
  for (let start = 0; start < lines.length; start += writeBatch) {
    // Only the last batch waits for a refresh, which makes every earlier batch searchable too.
    const last = start + writeBatch >= lines.length;
    const { body } = await request<{
      errors: boolean;
      items: Record<string, { _id: string; error?: { reason: string } }>[];
    }>(
      store,
      "POST",
      `/_bulk${last ? "?refresh=wait_for" : ""}`,
      lines.slice(start, start + writeBatch).flat(),
      {
        ndjson: true,
        timeoutMs: 120_000,
      },
    );
    if (body.errors) {
      const failed = body.items.flatMap((item) => Object.values(item)).filter((r) => r.error);
      throw new Error(
        `knowledge write failed for ${failed.length} object(s): ${failed[0]?.error?.reason ?? ""}`,
      );
    }
  }
}
