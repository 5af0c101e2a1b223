import type { KnowledgeObject } from "@remram/contract";
import type { MaturingObject } from "../core/knowledge.js";
import type { ProposalDraft } from "../core/proposal.js";
import { type CortexStore, request } from "../store/client.js";
import { getDocument, type SearchResult } from "../store/reads.js";
import { bulk, putDocument } from "../store/writes.js";

/**
 * The indices reflection, dream, promotion and the archive own beside the core ones: `<prefix>-maturation`
 * for records (proposals, dream reports, review items, reflection receipts, audit entries),
 * `<prefix>-archive` for the archive's summary index (summaries and coordinates, never full documents) and
 * `<prefix>-neighbours` for dream's neighbour graph (dream/neighbours.ts).
 */

export interface MaturationIndices {
  records: string;
  archive: string;
  neighbours: string;
}

export function maturationIndices(store: CortexStore): MaturationIndices {
  const prefix = store.indices.knowledge.replace(/-knowledge$/, "");
  return {
    records: `${prefix}-maturation`,
    archive: `${prefix}-archive`,
    neighbours: `${prefix}-neighbours`,
  };
}

const keyword = { type: "keyword" } as const;
const date = { type: "date" } as const;
const settings = { index: { number_of_shards: 1, number_of_replicas: 0 } };

const recordsMapping = {
  dynamic: false,
  properties: {
    kind: keyword,
    id: keyword,
    state: keyword,
    artifactPath: keyword,
    cycleId: keyword,
    subject: keyword,
    createdAt: date,
    updatedAt: date,
  },
};

const archiveMapping = {
  dynamic: false,
  properties: {
    hash: keyword,
    summary: { type: "text", analyzer: "english" },
    epochDay: { type: "integer" },
    y: { type: "integer" },
    z: { type: "integer" },
    clusterId: keyword,
    decayScore: { type: "float" },
    reinforcementCount: { type: "integer" },
    lastAccessedAt: date,
    ownerIds: keyword,
    authorIds: keyword,
    privacy: keyword,
    allowRecall: { type: "boolean" },
    sourceSession: keyword,
    sourceChannel: keyword,
    createdAt: date,
    archivedAt: date,
  },
};

/** Lists live in _source; only what selects them is indexed. */
const neighboursMapping = {
  dynamic: false,
  properties: { id: keyword, computedAt: date, vector: { type: "boolean" } },
};

/** Create the indices if missing (idempotent; safe to call on every start). */
export async function ensureMaturationIndices(store: CortexStore): Promise<MaturationIndices> {
  const indices = maturationIndices(store);
  for (const [index, mappings] of [
    [indices.records, recordsMapping],
    [indices.archive, archiveMapping],
    [indices.neighbours, neighboursMapping],
  ] as const) {
    const exists = await request(store, "HEAD", `/${index}`, undefined, { ignore: [404] });
    if (exists.statusCode === 404) {
      await request(store, "PUT", `/${index}`, { settings, mappings }, { ignore: [400], retries: 2 });
    } else {
      // Fields added since the index was made (additive only, so putting the mapping again changes nothing else).
      await request(store, "PUT", `/${index}/_mapping`, mappings, { retries: 2 });
    }
  }
  return indices;
}

export type RecordKind =
  | "proposal"
  | "dreamReport"
  | "review"
  | "reflectReceipt"
  | "audit"
  | "dimensionPromotion";

export interface StoredRecord<T> {
  kind: RecordKind;
  id: string;
  state?: string | undefined;
  /** The erasure subject (core/erasure.ts) of the person a record is about, where it names nobody's items. */
  subject?: string | undefined;
  createdAt: string;
  updatedAt: string;
  body: T;
}

function recordId(kind: RecordKind, id: string): string {
  return `${kind}:${id}`;
}

export async function getRecord<T>(
  store: CortexStore,
  indices: MaturationIndices,
  kind: RecordKind,
  id: string,
): Promise<StoredRecord<T> | undefined> {
  return getDocument<StoredRecord<T>>(store, indices.records, recordId(kind, id));
}

export async function putRecord<T>(
  store: CortexStore,
  indices: MaturationIndices,
  record: StoredRecord<T> & { artifactPath?: string; cycleId?: string },
): Promise<void> {
  await putDocument(store, indices.records, recordId(record.kind, record.id), record);
}

/**
 * Create a record only if none exists under its id; false when one did. `searchable: false` for records only
 * ever read by id (a GET by id sees a write at once), which saves waiting up to a second for the next refresh.
 */
export async function createRecord<T>(
  store: CortexStore,
  indices: MaturationIndices,
  record: StoredRecord<T> & { artifactPath?: string; cycleId?: string },
  options: { searchable?: boolean } = {},
): Promise<boolean> {
  const refresh = (options.searchable ?? true) ? "?refresh=wait_for" : "";
  const { statusCode } = await request(
    store,
    "PUT",
    `/${indices.records}/_create/${encodeURIComponent(recordId(record.kind, record.id))}${refresh}`,
    record,
    { ignore: [409] },
  );
  return statusCode !== 409;
}

/**
 * Several record writes in one request: `create` leaves an existing record as it is, `index` replaces it.
 * Not refreshed: the caller refreshes once when everything of its unit of work is written.
 */
export async function writeRecords(
  store: CortexStore,
  indices: MaturationIndices,
  writes: readonly {
    op: "create" | "index";
    record: StoredRecord<unknown> & { artifactPath?: string; cycleId?: string };
  }[],
): Promise<void> {
  if (writes.length === 0) return;
  const lines = writes.flatMap(({ op, record }) => [
    { [op]: { _index: indices.records, _id: recordId(record.kind, record.id) } },
    record,
  ]);
  const results = await bulk(store, lines, { timeoutMs: 60_000 });
  const failed = results.filter((result) => result.error !== undefined && result.status !== 409);
  if (failed.length > 0) {
    throw new Error(`record write failed for ${failed.length} record(s): ${failed[0]?.error?.reason ?? ""}`);
  }
}

export async function listRecords<T>(
  store: CortexStore,
  indices: MaturationIndices,
  kind: RecordKind,
  filter: { state?: string | undefined; artifactPath?: string | undefined } = {},
  limit = 500,
): Promise<StoredRecord<T>[]> {
  const { body } = await request<SearchResult<StoredRecord<T>>>(
    store,
    "POST",
    `/${indices.records}/_search`,
    {
      size: limit,
      query: {
        bool: {
          filter: [
            { term: { kind } },
            ...(filter.state === undefined ? [] : [{ term: { state: filter.state } }]),
            ...(filter.artifactPath === undefined ? [] : [{ term: { artifactPath: filter.artifactPath } }]),
          ],
        },
      },
      sort: [{ createdAt: "desc" }, { id: "asc" }],
    },
  );
  return body.hits.hits.map((hit) => hit._source);
}

/** A dream proposal as stored: the draft, where it applies, and what a person decided or git recorded. */
export interface ProposalRecordBody extends ProposalDraft {
  scope: MaturingObject["scope"];
  privacy: KnowledgeObject["privacy"];
  cycleId: string;
  decision?: { decision: "denied"; by: string; reason?: string | undefined; at: string } | undefined;
  promotion?: { commitId: string; approvedBy: string; at: string } | undefined;
}
