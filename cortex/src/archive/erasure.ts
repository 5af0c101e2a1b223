/**
 * /admin/erasure: really remove a person's data from every store Cortex keeps, and leave a tombstone that refuses
 * their older data coming back. The order makes a retry complete what a crash interrupted: the tombstone first; then
 * every copy found through the person's items (the repository's history, records, artifact chunks) while those items
 * still say what to look for; the archive; the items themselves last. Audited with counts, never content.
 */
import type { CallerName, ErasureCounts, ErasureRequest, MemoryDocument } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { erasedPhrases, erasureSubject, extractiveSummary, withoutPerson } from "../core/erasure.js";
import { redactText } from "../core/redaction.js";
import { eraseFromHistory, type HistoryEraser } from "../knowledge/artifact-chunks.js";
import {
  collectPersonItems,
  deletePersonItems,
  expungeDeleted,
  pruneDimensionValues,
  repointReferences,
  scanFields,
  unlinkErased,
  unusedDimensionValues,
} from "../knowledge/erasure.js";
import { erasureGate } from "../knowledge/erasure-gate.js";
import { type RecordCounts, scrubRecords } from "../knowledge/erasure-records.js";
import { createRecord, type MaturationIndices } from "../knowledge/records.js";
import { recordTombstone, tombstoneIndex } from "../knowledge/tombstones.js";
import { request as storeRequest } from "../store/client.js";
import { sha256Hex } from "./document.js";
import { authorsOf, type IndexEntry } from "./service.js";
import { ArchiveIntegrityError, ArchiveNotFoundError, type ArchiveStore } from "./store.js";

export interface ErasureStores {
  indices: MaturationIndices;
  archive: () => Promise<ArchiveStore>;
  /** The repository's eraser; absent, there is no repository to erase from. */
  history?: HistoryEraser | undefined;
}

export interface ErasureOutcome {
  auditId: string;
  erasedAt: string;
  knowledgeDeleted: number;
  chunksDeleted: number;
  archiveErased: number;
  counts: ErasureCounts;
  durationMs: number;
}

type Context = Pick<CortexContext, "store" | "clock" | "embedder" | "usage">;

/** When deleted documents' bytes are merged out of OpenSearch's segments again, after the erasure answered. */
export const expungeDelaysMs = [40_000, 90_000];

/**
 * One erasure at a time (two at once would overwrite each other's record scrubs), and none beside a promotion,
 * denial or dream write: those are refused while it runs, and it waits for those in flight (knowledge/erasure-gate).
 */
export function eraseUserData(
  context: Context,
  stores: ErasureStores,
  request: ErasureRequest,
  caller: CallerName,
): Promise<ErasureOutcome> {
  return erasureGate(context.store).exclusive(() => eraseNow(context, stores, request, caller));
}

async function eraseNow(
  context: Context,
  { indices, archive, history }: ErasureStores,
  { userId, requestedBy, reason }: ErasureRequest,
  caller: CallerName,
): Promise<ErasureOutcome> {
  const { store, clock } = context;
  const started = Date.now();
  const erasedAt = clock().toISOString();
  await recordTombstone(store, userId, erasedAt);
  // Items stored up to here are erased; a write that starts later has passed the tombstone (observed after it).
  const cut = clock().toISOString();
  const items = await collectPersonItems(store, userId, cut);
  const ids = new Set([...items.knowledgeIds, ...items.chunkIds]);
  const counts = emptyCounts();
  // Values no one else's item carries: what dream reports and dimension promotions must lose.
  const onlyTheirs = await unusedDimensionValues(store, items.dimensionValues, userId);
  const scrub = () =>
    scrubRecords(
      store,
      indices,
      { ids, subject: erasureSubject(userId), dimensionValues: onlyTheirs, erasedAt },
      clock().toISOString(),
    );
  // Proposals go before the history rewrite: one promoted after it would commit the erased statements again.
  const records = await scrub();

  if (history)
    Object.assign(
      counts,
      await eraseFromHistory(context, indices, history, { ids, phrases: erasedPhrases(items.statements) }),
    );
  Object.assign(counts, await eraseFromArchive(context, indices, archive, userId));

  const deleted = await deletePersonItems(store, indices, userId, items);
  // A write that passed its tombstone check just before the tombstone landed may have become visible since.
  const late = await collectPersonItems(store, userId, cut);
  const lateDeleted = await deletePersonItems(store, indices, userId, late);
  for (const id of [...late.knowledgeIds, ...late.chunkIds]) ids.add(id);
  context.usage.forget(ids);
  counts.knowledgeDeleted = deleted.knowledge + lateDeleted.knowledge;
  counts.vectorsDeleted = deleted.vectors + lateDeleted.vectors;
  counts.chunksDeleted = deleted.chunks + lateDeleted.chunks;
  counts.linksRemoved = await unlinkErased(store, ids);
  // The final re-check: a record that named the person's items and was written while the erasure ran (late items
  // included) goes too.
  const again = await scrub();
  addRecordCounts(counts, records);
  addRecordCounts(counts, again);
  const unused = await unusedDimensionValues(
    store,
    new Set([...items.dimensionValues, ...records.receiptDimensionValues, ...again.receiptDimensionValues]),
  );
  counts.dimensionValuesRemoved = await pruneDimensionValues(store, unused);
  const touched = [
    store.indices.knowledge,
    store.indices.vectors,
    store.indices.chunks,
    store.indices.dimensions,
    indices.records,
    indices.archive,
    indices.neighbours,
  ];
  // The flush drops the translog's copies now; deleted documents leave the segment files once the shard's
  // retention lease (synced every 30 s) has moved past them, so the merge is asked for again after that.
  await expungeDeleted(store, touched);
  for (const delay of expungeDelaysMs) setTimeout(() => void expungeDeleted(store, touched), delay).unref();

  const at = clock().toISOString();
  const auditId = `erasure-${sha256Hex(`${userId}\n${requestedBy}\n${at}`).slice(0, 16)}`;
  const durationMs = Date.now() - started;
  // Free text from the caller: kept, with any credential pasted into it replaced.
  const why = redactText(reason);
  await createRecord(store, indices, {
    kind: "audit",
    id: auditId,
    state: "erasure",
    createdAt: at,
    updatedAt: at,
    // Who asked, whom it concerned, when, and how much went where: never what was erased.
    body: {
      action: "erasure",
      userId,
      requestedBy,
      caller,
      reason: why,
      at,
      erasedAt,
      tombstone: tombstoneIndex(store),
      counts,
      durationMs,
    },
  });
  return {
    auditId,
    erasedAt,
    knowledgeDeleted: counts.knowledgeDeleted,
    chunksDeleted: counts.chunksDeleted,
    archiveErased: counts.archiveErased,
    counts,
    durationMs,
  };
}

function addRecordCounts(counts: ErasureCounts, records: RecordCounts): void {
  counts.proposalsDeleted += records.proposalsDeleted;
  counts.reviewsDeleted += records.reviewsDeleted;
  counts.recordsRewritten += records.recordsRewritten;
  counts.receiptsTombstoned += records.receiptsTombstoned;
}

function emptyCounts(): ErasureCounts {
  return {
    knowledgeDeleted: 0,
    vectorsDeleted: 0,
    chunksDeleted: 0,
    linksRemoved: 0,
    referencesRepointed: 0,
    dimensionValuesRemoved: 0,
    archiveErased: 0,
    archiveRewritten: 0,
    proposalsDeleted: 0,
    reviewsDeleted: 0,
    recordsRewritten: 0,
    receiptsTombstoned: 0,
    gitBlobsRewritten: 0,
    gitCommitsRewritten: 0,
    gitCommitsDropped: 0,
    workspaceFilesChanged: 0,
    artifactChunksChanged: 0,
  };
}

/**
 * Archived documents the person owns or wrote in. Theirs alone, or with nothing of anyone else left: deleted, file
 * and summary. Shared: rewritten without them, stored under its new hash with a new summary entry, the old file and
 * entry deleted, and what named the old hash moved to the new one.
 */
async function eraseFromArchive(
  { store }: Context,
  indices: MaturationIndices,
  archive: () => Promise<ArchiveStore>,
  userId: string,
): Promise<Pick<ErasureCounts, "archiveErased" | "archiveRewritten" | "referencesRepointed">> {
  const counts = { archiveErased: 0, archiveRewritten: 0, referencesRepointed: 0 };
  const query = { bool: { should: [{ term: { ownerIds: userId } }, { term: { authorIds: userId } }] } };
  const files = await archive();
  const dropEntry = (hash: string) =>
    storeRequest(store, "DELETE", `/${indices.archive}/_doc/${hash}?refresh=true`, undefined, {
      ignore: [404],
    });
  // A page at a time in hash order: an entry handled here is deleted or names the person no more.
  for await (const hits of scanFields<IndexEntry>(store, indices.archive, query, undefined, "hash"))
    for (const { _source: entry } of hits) {
      let document: MemoryDocument | undefined;
      try {
        document = await files.get(entry.hash);
      } catch (error) {
        // A file that is gone, or no longer what its hash says, cannot be rewritten: it goes with its entry.
        if (!(error instanceof ArchiveNotFoundError || error instanceof ArchiveIntegrityError)) throw error;
      }
      const scrub =
        document === undefined ? ({ outcome: "deleted" } as const) : withoutPerson(document, userId);
      if (scrub.outcome === "unchanged") continue;
      if (scrub.outcome === "deleted") {
        await files.erase(entry.hash);
        await dropEntry(entry.hash);
        counts.archiveErased += 1;
        continue;
      }
      const { hash } = await files.put(scrub.document);
      const rewritten: IndexEntry = {
        ...entry,
        hash,
        summary: scrub.removedMessages > 0 ? extractiveSummary(scrub.document) : entry.summary,
        ownerIds: [...scrub.document.consentScope.ownerIds].sort(),
        authorIds: authorsOf(scrub.document),
      };
      // The same remaining content may be archived already; its entry then stays as it is.
      await storeRequest(store, "PUT", `/${indices.archive}/_create/${hash}?refresh=true`, rewritten, {
        ignore: [409],
      });
      await dropEntry(entry.hash);
      await files.erase(entry.hash);
      counts.referencesRepointed += await repointReferences(store, indices, entry.hash, hash);
      counts.archiveRewritten += 1;
    }
  return counts;
}
