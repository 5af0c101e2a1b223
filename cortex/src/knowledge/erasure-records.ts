/**
 * Erasure in the maturation records: proposals and review items that name an erased item are deleted (a proposal's
 * content and diff quote the item, and dream proposes the rest again from what remains), dream reports and dimension
 * promotions lose the erased entries, and the person's reflection receipts (found by subject) are emptied but kept,
 * so a replay of the same delta is recognised and refused; other people's receipts are never touched. Audit records
 * are never touched: they hold counts, not content. Read by kind and subject a page at a time, never whole.
 */
import { type CortexStore, request } from "../store/client.js";
import type { SearchResult } from "../store/reads.js";
import { bulk } from "../store/writes.js";
import type { MaturationIndices, StoredRecord } from "./records.js";

export interface RecordErasure {
  /** Knowledge object and chunk ids of the person. */
  ids: ReadonlySet<string>;
  /**
   * The person's erasure subject: their receipts carry it. Absent for a forget of single objects, which leaves
   * every receipt as it is (they hold ids only, and one kept answers a replayed delta instead of applying it again).
   */
  subject?: string | undefined;
  /** Dimension values only the person's items carried. */
  dimensionValues: ReadonlySet<string>;
  erasedAt: string;
}

export interface RecordCounts {
  proposalsDeleted: number;
  reviewsDeleted: number;
  recordsRewritten: number;
  receiptsTombstoned: number;
  /** Candidate dimension values the emptied receipts had observed; the caller prunes them from the samples. */
  receiptDimensionValues: Set<string>;
}

/** Every token that could be an id; a record names an erased item when one of them is in the erased set. */
function names(value: unknown, ids: ReadonlySet<string>): boolean {
  for (const token of JSON.stringify(value).match(/[\w.:-]{6,}/g) ?? []) if (ids.has(token)) return true;
  return false;
}

interface ReportBody {
  reviewItems?: { objectIds: string[] }[];
  merges?: { survivorId: string; mergedIds: string[] }[];
  proposalIds?: string[];
  dimensionPromotions?: { values: string[] }[];
}

type Decision = { op: "keep" } | { op: "delete" } | { op: "index"; record: StoredRecord<unknown> };

/** What the erasure does to one record (audit records are never read; exported for the unit tests). */
export function decide(
  record: StoredRecord<unknown>,
  erasure: RecordErasure,
  deletedProposals: ReadonlySet<string>,
  now: string,
): Decision {
  const { ids } = erasure;
  switch (record.kind) {
    case "audit":
      return { op: "keep" };
    case "reflectReceipt": {
      if (erasure.subject === undefined) return { op: "keep" };
      // The person's own receipts, by subject; one written before `subject` existed, by the items it names. Another
      // person's receipt is theirs, even when it names one of the erased items: emptied, it would refuse their
      // honest retry with 410.
      const theirs =
        record.subject === undefined ? names(record.body, ids) : record.subject === erasure.subject;
      if (!theirs) return { op: "keep" };
      if (typeof record.body === "object" && record.body !== null && "erased" in record.body)
        return { op: "keep" };
      return { op: "index", record: { ...record, updatedAt: now, body: { erased: erasure.erasedAt } } };
    }
    case "dreamReport": {
      const body = record.body as ReportBody;
      const scrubbed: ReportBody = {
        ...body,
        reviewItems: body.reviewItems?.filter((item) => !item.objectIds.some((id) => ids.has(id))),
        merges: body.merges?.filter((m) => !ids.has(m.survivorId) && !m.mergedIds.some((id) => ids.has(id))),
        proposalIds: body.proposalIds?.filter((id) => !deletedProposals.has(id)),
        dimensionPromotions: body.dimensionPromotions?.map((p) => ({
          ...p,
          values: p.values.filter((v) => !erasure.dimensionValues.has(v)),
        })),
      };
      if (JSON.stringify(scrubbed) === JSON.stringify(body)) return { op: "keep" };
      return { op: "index", record: { ...record, updatedAt: now, body: scrubbed } };
    }
    case "dimensionPromotion": {
      const body = record.body as { values: string[] };
      const values = body.values.filter((v) => !erasure.dimensionValues.has(v));
      if (values.length === body.values.length) return { op: "keep" };
      if (values.length === 0) return { op: "delete" };
      return { op: "index", record: { ...record, updatedAt: now, body: { ...body, values } } };
    }
    default:
      // Proposals, review items and any later kind: naming an erased item, the record is about the person.
      return names(record.body, ids) ? { op: "delete" } : { op: "keep" };
  }
}

type Hit = { _id: string; _source: StoredRecord<unknown> };

/** The records matching `query`, a page at a time in (kind, id) order: never the whole index in memory. */
async function* scanRecords(store: CortexStore, index: string, query: unknown): AsyncGenerator<Hit[]> {
  const size = 1000;
  let after: unknown[] | undefined;
  for (;;) {
    const { body } = await request<
      SearchResult<StoredRecord<unknown>> & { hits: { hits: { sort?: unknown[] }[] } }
    >(
      store,
      "POST",
      `/${index}/_search`,
      { size, query, sort: [{ kind: "asc" }, { id: "asc" }], ...(after && { search_after: after }) },
      { timeoutMs: 60_000 },
    );
    const hits = body.hits.hits;
    if (hits.length > 0) yield hits;
    after = hits[hits.length - 1]?.sort;
    if (hits.length < size || after === undefined) return;
  }
}

const kinds = (...names: string[]) => ({ terms: { kind: names } });

/**
 * What to read, in order: proposals first (a dream report lists proposal ids, and those deleted leave its list),
 * then the other records that may name the person's items, then their receipts (by subject; those without one, from
 * before `subject` existed, by the items they name). Never the receipts of other people, nor audit records.
 */
export function recordQueries(subject: string | undefined): unknown[] {
  const named = [kinds("proposal"), kinds("review", "dreamReport", "dimensionPromotion")];
  if (subject === undefined) return named;
  return [
    ...named,
    {
      bool: {
        filter: [kinds("reflectReceipt")],
        should: [{ term: { subject } }, { bool: { must_not: { exists: { field: "subject" } } } }],
        minimum_should_match: 1,
      },
    },
  ];
}

export async function scrubRecords(
  store: CortexStore,
  indices: MaturationIndices,
  erasure: RecordErasure,
  now: string,
): Promise<RecordCounts> {
  const counts: RecordCounts = {
    proposalsDeleted: 0,
    reviewsDeleted: 0,
    recordsRewritten: 0,
    receiptsTombstoned: 0,
    receiptDimensionValues: new Set(),
  };
  // Receipts are read by id only and may not be searchable yet.
  await request(store, "POST", `/${indices.records}/_refresh`);
  const deletedProposals = new Set<string>();
  for (const query of recordQueries(erasure.subject)) {
    for await (const hits of scanRecords(store, indices.records, query)) {
      const actions: unknown[] = [];
      for (const { _id, _source: record } of hits) {
        const decision = decide(record, erasure, deletedProposals, now);
        if (decision.op === "keep") continue;
        if (decision.op === "delete") {
          actions.push({ delete: { _index: indices.records, _id } });
          if (record.kind === "proposal") {
            deletedProposals.add(record.id);
            counts.proposalsDeleted += 1;
          } else if (record.kind === "review") counts.reviewsDeleted += 1;
          else counts.recordsRewritten += 1;
          continue;
        }
        actions.push({ index: { _index: indices.records, _id } }, decision.record);
        if (record.kind === "reflectReceipt") {
          counts.receiptsTombstoned += 1;
          const observed =
            (record.body as { candidateDimensions?: { value: string }[] }).candidateDimensions ?? [];
          for (const { value } of observed) counts.receiptDimensionValues.add(value);
        } else counts.recordsRewritten += 1;
      }
      if (actions.length > 0) await bulk(store, actions, { refresh: "true", timeoutMs: 120_000 });
    }
  }
  return counts;
}

/** Promoted proposals name their commit; a history rewrite gives it a new id (or drops it, then it is unset). */
export async function repointCommits(
  store: CortexStore,
  indices: MaturationIndices,
  commits: ReadonlyMap<string, string | null>,
): Promise<number> {
  if (commits.size === 0) return 0;
  let repointed = 0;
  const promoted = { bool: { filter: [kinds("proposal"), { term: { state: "promoted" } }] } };
  for await (const hits of scanRecords(store, indices.records, promoted)) {
    const actions: unknown[] = [];
    for (const { _id, _source: record } of hits) {
      const promotion = (record.body as { promotion?: { commitId: string } }).promotion;
      if (promotion === undefined || !commits.has(promotion.commitId)) continue;
      const commitId = commits.get(promotion.commitId);
      const body = {
        ...(record.body as object),
        promotion: commitId ? { ...promotion, commitId } : undefined,
      };
      actions.push({ index: { _index: indices.records, _id } }, { ...record, body });
    }
    if (actions.length > 0) await bulk(store, actions, { refresh: "true", timeoutMs: 120_000 });
    repointed += actions.length / 2;
  }
  return repointed;
}
