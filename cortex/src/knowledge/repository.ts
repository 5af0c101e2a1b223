import type { KnowledgeObject } from "@remram/contract";
import type { Claim, Scope } from "../core/knowledge.js";
import { normaliseClaimPart } from "../core/knowledge.js";
import { type CortexStore, request } from "../store/client.js";
import { gateChanged, knowledgeDocument, knowledgeWriteLines, vectorGateFields } from "../store/documents.js";
import { multiSearch, scanDocuments } from "../store/reads.js";
import { type BulkItemResult, bulk, bulkFailure } from "../store/writes.js";

/**
 * The knowledge-index side of reflection and dream: candidate lookups (same claim, nearest neighbours in one
 * scope), reads by id, paged scans, and writes that keep an object's vector document in step with its gate.
 */

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
 * plus its `k` nearest neighbours by embedding. Two round trips: the searches, then the neighbours' objects.
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
        index: store.indices.vectors,
        query: index,
        knn: true,
        body: {
          size: k,
          _source: false,
          query: { knn: { embedding: { vector: query.vector, k, filter: { bool: { filter } } } } },
        },
      });
    }
  });
  const responses = await multiSearch<KnowledgeObject>(store, searches, timeoutMs);
  const claimHits = new Map<string, KnowledgeObject>();
  const found: { search: number; id: string; similarity: number | undefined }[] = [];
  responses.forEach((response, i) => {
    const search = searches[i];
    if (!search) return;
    if (response.error) throw new Error(`candidate lookup failed: ${response.error.reason}`);
    for (const hit of response.hits.hits) {
      if (!search.knn) claimHits.set(hit._id, hit._source);
      const similarity = search.knn && hit._score !== null ? cosineFromScore(hit._score) : undefined;
      found.push({ search: i, id: hit._id, similarity });
    }
  });
  const neighbours = await loadObjects(
    store,
    found.filter((hit) => !claimHits.has(hit.id)).map((hit) => hit.id),
  );
  const results: Map<string, CandidateHit>[] = queries.map(() => new Map());
  for (const { search, id, similarity } of found) {
    const object = claimHits.get(id) ?? neighbours.get(id);
    // The object is the authority: a vector document may briefly lag an invalidation.
    if (object === undefined || object.status === "invalidated") continue;
    const byId = results[searches[search]?.query ?? -1];
    if (byId === undefined) continue;
    byId.set(id, { object, similarity: similarity ?? byId.get(id)?.similarity });
  }
  return results.map((byId) => [...byId.values()]);
}

/** Objects by id, whatever their scope; callers check scope themselves. */
export async function loadObjects(
  store: CortexStore,
  ids: readonly string[],
): Promise<Map<string, KnowledgeObject>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  // Documents written before vectors moved out (template v1) still hold theirs; nothing here reads it.
  const { body } = await request<{ docs: { _id: string; found: boolean; _source?: KnowledgeObject }[] }>(
    store,
    "POST",
    `/${store.indices.knowledge}/_mget?_source_excludes=embedding`,
    { ids: unique },
  );
  return new Map(
    body.docs.filter((d) => d.found && d._source).map((d) => [d._id, d._source as KnowledgeObject]),
  );
}

/** Stored vectors by object id; objects stored without one (embedding model down) are absent. */
export async function loadVectors(
  store: CortexStore,
  ids: readonly string[],
): Promise<Map<string, number[]>> {
  const unique = [...new Set(ids)];
  if (unique.length === 0) return new Map();
  const { body } = await request<{
    docs: { _id: string; found: boolean; _source?: { embedding?: number[] } }[];
  }>(
    store,
    "POST",
    `/${store.indices.vectors}/_mget?_source_includes=embedding`,
    { ids: unique },
    { timeoutMs: 60_000 },
  );
  const vectors = new Map<string, number[]>();
  for (const doc of body.docs) {
    const embedding = doc._source?.embedding;
    if (doc.found && Array.isArray(embedding)) vectors.set(doc._id, embedding);
  }
  return vectors;
}

/**
 * Every object matching `query` (a dream cycle reads the whole live set), each with the version it was read at,
 * in no particular order.
 */
export async function* scanObjects(
  store: CortexStore,
  query: unknown,
): AsyncGenerator<{ object: KnowledgeObject; version: DocumentVersion }[]> {
  for await (const hits of scanDocuments<KnowledgeObject>(store, store.indices.knowledge, query)) {
    yield hits.map((hit) => ({
      object: hit._source,
      version: { seqNo: hit._seq_no ?? -1, primaryTerm: hit._primary_term ?? -1 },
    }));
  }
}

/** The version of a document as read; a write conditional on it fails if anyone wrote the document since. */
export interface DocumentVersion {
  seqNo: number;
  primaryTerm: number;
}

/**
 * A changed object and what it was read as: its vector document follows its gate (vectorWrite), and with
 * `readAt` the update applies only if nobody wrote the object since (else it is skipped and reported).
 */
export interface ObjectUpdate {
  object: KnowledgeObject;
  previous: KnowledgeObject;
  readAt?: DocumentVersion | undefined;
}

/**
 * What an applied update does to the object's vector document. An invalidated object never comes back (nothing
 * matches, retrieves or revives it), so its vector is deleted: a cheap tombstone, and the HNSW graph keeps only
 * what can still be found. A demoted object keeps its vector, so reflection can still recognise and revive it
 * when it is asserted again. Other gate changes rewrite the vector document's gate fields.
 */
export function vectorWrite(vectors: string, { object, previous }: ObjectUpdate): unknown[] {
  if (object.status === "invalidated") {
    return previous.status === "invalidated" ? [] : [{ delete: { _index: vectors, _id: object.id } }];
  }
  if (!gateChanged(previous, object)) return [];
  return [
    { update: { _index: vectors, _id: object.id, retry_on_conflict: 3 } },
    { doc: vectorGateFields(object) },
  ];
}

/**
 * Write objects: new ones are indexed whole, with their vector when they have one; updated ones are partial
 * updates of the knowledge document, then, for updates that applied, of the vector document (vectorWrite). An
 * update with `readAt` is skipped when someone wrote the object since; the skipped ids are returned. With
 * `waitForRefresh` (the default) the writes are searchable when this resolves.
 */
export async function writeObjects(
  store: CortexStore,
  created: readonly {
    object: KnowledgeObject;
    embedding: readonly number[] | null;
    embeddingModel: string | null;
  }[],
  updated: readonly ObjectUpdate[],
  options: { waitForRefresh?: boolean } = {},
): Promise<{ conflicts: string[] }> {
  const waitForRefresh = options.waitForRefresh ?? true;
  // Only a last batch waits for the refresh, which makes every earlier batch searchable too.
  const refreshed = (last: boolean) =>
    waitForRefresh && last ? ({ refresh: "wait_for", timeoutMs: 120_000 } as const) : { timeoutMs: 120_000 };
  const entries: { lines: unknown[]; update?: ObjectUpdate }[] = [];
  for (const { object, embedding, embeddingModel } of created) {
    entries.push({ lines: knowledgeWriteLines(store.indices, "index", object, embedding, embeddingModel) });
  }
  for (const update of updated) {
    const { object, readAt } = update;
    const condition =
      readAt === undefined
        ? { retry_on_conflict: 3 }
        : { if_seq_no: readAt.seqNo, if_primary_term: readAt.primaryTerm };
    entries.push({
      lines: [
        { update: { _index: store.indices.knowledge, _id: object.id, ...condition } },
        { doc: knowledgeDocument(object) },
      ],
      update,
    });
  }

  const conflicts: string[] = [];
  const applied: ObjectUpdate[] = [];
  const failures: BulkItemResult[] = [];
  // Bounded bulk bodies: a full dream cycle may rewrite every object.
  for (let start = 0; start < entries.length; start += writeBatch) {
    const batch = entries.slice(start, start + writeBatch);
    const last = start + writeBatch >= entries.length;
    const results = await bulk(
      store,
      batch.flatMap((entry) => entry.lines),
      refreshed(last),
    );
    let position = 0;
    for (const entry of batch) {
      const itemResults = results.slice(position, position + entry.lines.length / 2);
      position += entry.lines.length / 2;
      const failed = itemResults.find((result) => result.error !== undefined);
      if (failed === undefined) {
        if (entry.update) applied.push(entry.update);
      } else if (failed.status === 409 && entry.update?.readAt !== undefined) {
        conflicts.push(entry.update.object.id);
      } else if (failed.error?.type !== "document_missing_exception") {
        // An object erased while this write was planned stays erased: not recreated, not a failure.
        failures.push(failed);
      }
    }
  }
  if (failures.length > 0) {
    throw bulkFailure(
      `knowledge write failed for ${failures.length} object(s): ${failures[0]?.error?.reason ?? ""}`,
      failures,
    );
  }

  const vectorLines = applied
    .map((update) => vectorWrite(store.indices.vectors, update))
    .filter((l) => l.length > 0);
  for (let start = 0; start < vectorLines.length; start += writeBatch) {
    const results = await bulk(
      store,
      vectorLines.slice(start, start + writeBatch).flat(),
      refreshed(start + writeBatch >= vectorLines.length),
    );
    // An object stored without a vector has none to update or delete; that is not a failure.
    const failed = results.filter(
      (r) => r.error !== undefined && r.error.type !== "document_missing_exception" && r.status !== 404,
    );
    if (failed.length > 0) {
      throw new Error(`vector write failed for ${failed.length} object(s): ${failed[0]?.error?.reason}`);
    }
  }
  return { conflicts };
}
