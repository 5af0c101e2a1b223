/**
 * POST /person/knowledge/forget: really remove single knowledge objects from every store that holds them, and
 * refuse their return. All or nothing: every id is checked before anything changes. In the order erasure uses, so
 * that a retry finishes what a crash interrupted: the tombstones first (ingest and reflection refuse the objects
 * from then on), records and the repository's history while the objects still say what to look for, the objects
 * last. One at a time, like an erasure (the erasure gate's exclusive section): promotions and dream writes wait.
 * Audited with counts, never content.
 */

import { createHash } from "node:crypto";
import type {
  CallerName,
  ForgetCounts,
  KnowledgeObject,
  PersonKnowledgeForgetRequest,
  PersonKnowledgeForgetResponse,
} from "@remram/contract";
import type { CortexContext } from "../context.js";
import { erasedPhrases } from "../core/erasure.js";
import { forgottenIdSubject, forgottenOwnerSubject, ownerKey } from "../core/forgotten.js";
import { isVisible, mayForget, type Viewer } from "../core/person-knowledge.js";
import { redactText } from "../core/redaction.js";
import { forbidden, notFound } from "../http-errors.js";
import { eraseFromHistory, type HistoryEraser } from "../knowledge/artifact-chunks.js";
import {
  deleteByIds,
  expungeDeleted,
  pruneDimensionValues,
  unlinkErased,
  unusedDimensionValues,
} from "../knowledge/erasure.js";
import { erasureGate } from "../knowledge/erasure-gate.js";
import { type RecordCounts, scrubRecords } from "../knowledge/erasure-records.js";
import { type ForgottenMark, forgottenAmong, recordForgotten } from "../knowledge/forgotten.js";
import { createRecord, type MaturationIndices } from "../knowledge/records.js";
import { loadObjects } from "../knowledge/repository.js";
import { viewerOf } from "./list.js";

export interface ForgetStores {
  indices: MaturationIndices;
  history?: HistoryEraser | undefined;
  /** Told of a forget's tombstones once recorded (the backup destination keeps a copy); must not throw. */
  afterForgotten?: ((marks: readonly ForgottenMark[]) => Promise<void>) | undefined;
}

type Context = Pick<CortexContext, "store" | "clock" | "embedder" | "usage" | "config">;

/** When deleted documents' bytes are merged out of OpenSearch's segments again, after the forget answered. */
const expungeDelaysMs = [40_000, 90_000];

export async function forgetKnowledge(
  context: Context,
  stores: ForgetStores,
  request: PersonKnowledgeForgetRequest,
  caller: CallerName,
  admin: boolean,
): Promise<PersonKnowledgeForgetResponse> {
  const { response, marks } = await erasureGate(context.store).exclusive(() =>
    forgetNow(context, stores, request, caller, admin),
  );
  // Outside the gate: a slow destination must not hold up promotions and dream writes.
  await stores.afterForgotten?.(marks);
  return response;
}

/** Which ids go now and which an earlier forget took (a retry); refuses the whole request otherwise. */
async function checkAll(
  context: Context,
  ids: readonly string[],
  viewer: Viewer,
  admin: boolean,
): Promise<{ objects: KnowledgeObject[]; alreadyForgotten: number }> {
  const loaded = await loadObjects(context.store, ids);
  const objects = ids.flatMap((id) => {
    const object = loaded.get(id);
    return object !== undefined && isVisible(object, viewer) ? [object] : [];
  });
  const household = objects.filter((object) => !mayForget(object, viewer, admin));
  if (household.length > 0)
    throw forbidden(
      `${household.length} of the ids are household knowledge, which only an administrator may forget (asAdmin); nothing was forgotten`,
    );
  const absent = ids.filter((id) => !objects.some((object) => object.id === id));
  // An id this person's earlier forget removed is done already; any other absent id is not told apart from one
  // that is someone else's.
  const owners = new Set(
    [ownerKey("user", viewer.userId), admin ? ownerKey("household", viewer.householdId) : undefined]
      .filter((owner) => owner !== undefined)
      .map(forgottenOwnerSubject),
  );
  const marks = await forgottenAmong(context.store, absent.map(forgottenIdSubject));
  const done = absent.filter((id) => {
    const owner = marks.get(forgottenIdSubject(id))?.owner;
    return owner !== undefined && owners.has(owner);
  });
  const unknown = absent.length - done.length;
  if (unknown > 0)
    throw notFound(
      `${unknown} of the ${ids.length} ids are not yours or do not exist; nothing was forgotten`,
    );
  return { objects, alreadyForgotten: done.length };
}

async function forgetNow(
  context: Context,
  stores: ForgetStores,
  request: PersonKnowledgeForgetRequest,
  caller: CallerName,
  admin: boolean,
): Promise<{ response: PersonKnowledgeForgetResponse; marks: ForgottenMark[] }> {
  const started = Date.now();
  const ids = [...new Set(request.ids)];
  const viewer = viewerOf(context, request.userId);
  const { objects, alreadyForgotten } = await checkAll(context, ids, viewer, admin);
  const forgottenAt = context.clock().toISOString();
  const { counts, marks } = await removeObjects(context, stores, objects, forgottenAt);
  const at = context.clock().toISOString();
  const auditId = `forget-${createHash("sha256")
    .update(`${request.userId}\n${request.requestedBy}\n${ids.join(",")}\n${at}`)
    .digest("hex")
    .slice(0, 16)}`;
  const durationMs = Date.now() - started;
  await auditForget(context, stores, auditId, at, {
    userId: request.userId,
    requestedBy: request.requestedBy,
    caller,
    asAdmin: request.asAdmin,
    reason: redactText(request.reason),
    forgottenAt,
    forgotten: objects.length,
    alreadyForgotten,
    counts,
    durationMs,
  });
  return {
    response: { auditId, forgottenAt, forgotten: objects.length, alreadyForgotten, counts, durationMs },
    marks,
  };
}

/**
 * A restore's replay of a forget the backup predates (backup/restore.ts replayForgotten): the objects with these ids
 * that the restore brought back go again, as the first forget removed them, with its time. Audited like a forget,
 * requested by "restore". Answers how many objects it removed.
 */
export function forgetAgain(
  context: Context,
  stores: ForgetStores,
  ids: readonly string[],
  forgottenAt: string,
  reason: string,
): Promise<number> {
  return erasureGate(context.store).exclusive(async () => {
    const started = Date.now();
    const objects = [...(await loadObjects(context.store, [...new Set(ids)])).values()];
    const { counts } = await removeObjects(context, stores, objects, forgottenAt);
    const at = context.clock().toISOString();
    await auditForget(
      context,
      stores,
      `forget-replay-${createHash("sha256")
        .update(`${ids.join(",")}\n${at}`)
        .digest("hex")
        .slice(0, 16)}`,
      at,
      {
        requestedBy: "restore",
        caller: "admin",
        reason,
        forgottenAt,
        forgotten: objects.length,
        counts,
        durationMs: Date.now() - started,
      },
    );
    return objects.length;
  });
}

/** Who asked, whose, when, and how much went where: never what was forgotten. */
function auditForget(
  { store }: Context,
  { indices }: ForgetStores,
  id: string,
  at: string,
  body: Record<string, unknown>,
): Promise<unknown> {
  return createRecord(store, indices, {
    kind: "audit",
    id,
    state: "forget",
    createdAt: at,
    updatedAt: at,
    body: { action: "forget", at, ...body },
  });
}

/** Remove the objects from every store that holds them, tombstones first; answers the tombstones recorded. */
async function removeObjects(
  context: Context,
  { indices, history }: ForgetStores,
  objects: readonly KnowledgeObject[],
  forgottenAt: string,
): Promise<{ counts: ForgetCounts; marks: ForgottenMark[] }> {
  const { store, clock } = context;
  const counts = emptyCounts();
  if (objects.length === 0) return { counts, marks: [] };
  const gone = new Set(objects.map((object) => object.id));
  const marks = await recordForgotten(store, objects, forgottenAt);
  const dimensionValues = new Set(objects.flatMap((object) => Object.values(object.dimensions).flat()));
  const scrub = (values: ReadonlySet<string>) =>
    scrubRecords(
      store,
      indices,
      { ids: gone, dimensionValues: values, erasedAt: forgottenAt },
      clock().toISOString(),
    );
  // Proposals quoting the objects go before the history rewrite: one promoted after it would commit them again.
  addRecordCounts(counts, await scrub(new Set()));
  if (history) {
    const statements = objects.flatMap((o) => [o.statement, ...(o.claim ? [o.claim.object] : [])]);
    Object.assign(
      counts,
      await eraseFromHistory(context, indices, history, { ids: gone, phrases: erasedPhrases(statements) }),
    );
  }
  const { knowledge, vectors } = store.indices;
  const [knowledgeDeleted = 0, vectorsDeleted = 0] = await deleteByIds(
    store,
    [knowledge, vectors, indices.neighbours],
    [...gone],
  );
  // An ingest that passed its tombstone check just before the tombstones landed may have stored one again.
  const late = [...(await loadObjects(store, [...gone])).keys()];
  const [lateKnowledge = 0, lateVectors = 0] = await deleteByIds(store, [knowledge, vectors], late);
  counts.knowledgeDeleted = knowledgeDeleted + lateKnowledge;
  counts.vectorsDeleted = vectorsDeleted + lateVectors;
  context.usage.forget(gone);
  counts.linksRemoved = await unlinkErased(store, gone);
  const unused = await unusedDimensionValues(store, dimensionValues);
  counts.dimensionValuesRemoved = await pruneDimensionValues(store, unused);
  // Again at the end, with the values no one else carries: dream reports' promotions lose them, and a record
  // written while this ran that names the objects goes too.
  addRecordCounts(counts, await scrub(unused));
  const touched = [
    knowledge,
    vectors,
    store.indices.chunks,
    store.indices.dimensions,
    indices.records,
    indices.neighbours,
  ];
  await expungeDeleted(store, touched);
  for (const delay of expungeDelaysMs) setTimeout(() => void expungeDeleted(store, touched), delay).unref();
  return { counts, marks };
}

function addRecordCounts(counts: ForgetCounts, records: RecordCounts): void {
  counts.proposalsDeleted += records.proposalsDeleted;
  counts.reviewsDeleted += records.reviewsDeleted;
  counts.recordsRewritten += records.recordsRewritten;
}

function emptyCounts(): ForgetCounts {
  return {
    knowledgeDeleted: 0,
    vectorsDeleted: 0,
    linksRemoved: 0,
    dimensionValuesRemoved: 0,
    proposalsDeleted: 0,
    reviewsDeleted: 0,
    recordsRewritten: 0,
    gitBlobsRewritten: 0,
    gitCommitsRewritten: 0,
    gitCommitsDropped: 0,
    workspaceFilesChanged: 0,
    artifactChunksChanged: 0,
  };
}
