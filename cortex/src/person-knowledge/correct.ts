/**
 * POST /person/knowledge/correct, the shell around core/correction.ts: read the object with its version, plan,
 * then invalidate it (only if nobody wrote it since; else read and plan again) and create the correction, in a
 * shared section of the erasure gate. The old object goes first: a crash between the two leaves it invalidated
 * and linked to an id that a retry of the same correction recognises and completes.
 */
import type {
  CallerName,
  KnowledgeObject,
  PersonKnowledgeCorrectRequest,
  PersonKnowledgeCorrectResponse,
} from "@remram/contract";
import type { CortexContext } from "../context.js";
import { planCorrection } from "../core/correction.js";
import { mayCorrect } from "../core/person-knowledge.js";
import { redactText } from "../core/redaction.js";
import { badRequest, conflict, notFound, serviceUnavailable } from "../http-errors.js";
import { ErasureInProgressError, erasureGate } from "../knowledge/erasure-gate.js";
import { createRecord, type MaturationIndices } from "../knowledge/records.js";
import { type DocumentVersion, writeObjects } from "../knowledge/repository.js";
import { request as storeRequest } from "../store/client.js";
import { knowledgeObjectFields, knowledgeWriteLines } from "../store/documents.js";
import { vectorOrNull } from "../store/embedder.js";
import { bulk, bulkFailure } from "../store/writes.js";
import { viewerOf } from "./list.js";

export interface Correction {
  answer: PersonKnowledgeCorrectResponse;
  /** The same correction was made before; nothing new was written. */
  replayed: boolean;
  /** Whether the new object was stored with its vector (undefined: stored before). */
  embedded?: boolean | undefined;
}

/** Reads and plans again at most this often when the object changes between the read and the write. */
const attempts = 3;

export async function correctKnowledge(
  context: CortexContext,
  indices: MaturationIndices,
  request: PersonKnowledgeCorrectRequest,
  caller: CallerName,
): Promise<Correction> {
  const { store } = context;
  const viewer = viewerOf(context, request.userId);
  const now = context.clock().toISOString();
  // The same answer for an id that does not exist and one the person may not see: existence is not told.
  const unknown = () => notFound(`no knowledge object ${request.id} that this person may correct`);
  let vector: number[] | null | undefined;
  for (let attempt = 1; attempt <= attempts; attempt += 1) {
    const read = await readVersioned(context, request.id);
    if (read === undefined || !mayCorrect(read.object, viewer)) throw unknown();
    const plan = planCorrection(read.object, request.statement, now);
    if (plan.kind === "unchanged")
      throw badRequest("body.statement: the correction says what the object says");
    if (plan.kind === "inactive")
      throw conflict(
        `knowledge object ${request.id} is ${plan.status} (or past its validity), not active: only an active one can be corrected`,
      );
    const invalidated = request.id;
    if (plan.kind === "replay") {
      const stored = (await readVersioned(context, plan.created.id))?.object;
      if (stored !== undefined) return { answer: { invalidated, created: stored }, replayed: true };
    }
    vector ??= await vectorOrNull(context.embedder, plan.created.statement);
    const embedding = vector;
    const created = await inGate(context, async () => {
      // Done before, cut short by a crash between invalidating the old object and creating this one: completed.
      if (plan.kind === "replay") return create(context, plan.created, embedding);
      // Read outside the gate: a forget may have taken the object since (an update would skip a missing one).
      const current = await readVersioned(context, request.id);
      if (current === undefined) throw unknown();
      const { seqNo, primaryTerm } = current.version;
      if (seqNo !== read.version.seqNo || primaryTerm !== read.version.primaryTerm) return undefined;
      const { conflicts } = await writeObjects(
        store,
        [],
        [{ object: plan.invalidated, previous: read.object, readAt: read.version }],
        { waitForRefresh: false },
      );
      return conflicts.length > 0 ? undefined : create(context, plan.created, embedding);
    });
    if (created === undefined) continue;
    await audit(context, indices, request, caller, created.id, now);
    return {
      answer: { invalidated, created },
      replayed: plan.kind === "replay",
      embedded: embedding !== null,
    };
  }
  throw serviceUnavailable(`knowledge object ${request.id} kept changing while it was corrected; retry`);
}

async function inGate<T>(context: CortexContext, work: () => Promise<T>): Promise<T> {
  try {
    return await erasureGate(context.store).shared("a correction", work);
  } catch (error) {
    if (error instanceof ErasureInProgressError) throw serviceUnavailable(error.message);
    throw error;
  }
}

/** The object as stored (its own fields only) with the version a conditional write needs, or undefined. */
async function readVersioned(
  { store }: Pick<CortexContext, "store">,
  id: string,
): Promise<{ object: KnowledgeObject; version: DocumentVersion } | undefined> {
  const { statusCode, body } = await storeRequest<{
    found: boolean;
    _source?: KnowledgeObject;
    _seq_no?: number;
    _primary_term?: number;
  }>(
    store,
    "GET",
    `/${store.indices.knowledge}/_doc/${encodeURIComponent(id)}?_source_includes=${knowledgeObjectFields.join(",")}`,
    undefined,
    { ignore: [404] },
  );
  if (statusCode === 404 || !body.found || body._source === undefined) return undefined;
  return {
    object: body._source,
    version: { seqNo: body._seq_no ?? -1, primaryTerm: body._primary_term ?? -1 },
  };
}

/** Created by id (a retry finds it there), with its vector when there is one; searchable when this resolves. */
async function create(
  context: CortexContext,
  object: KnowledgeObject,
  vector: number[] | null,
): Promise<KnowledgeObject> {
  const { store } = context;
  const lines = knowledgeWriteLines(store.indices, "create", object, vector, context.embedder?.model ?? null);
  const results = await bulk(store, lines, { refresh: "wait_for", timeoutMs: 30_000 });
  const failed = results.filter((result) => result.error !== undefined && result.status !== 409);
  if (failed.length > 0) throw bulkFailure("the correction was not stored", failed);
  return object;
}

/** Who corrected what for whom and why (the reason redacted): never the statements. Written once per correction. */
async function audit(
  { store }: CortexContext,
  indices: MaturationIndices,
  { userId, requestedBy, id, reason }: PersonKnowledgeCorrectRequest,
  caller: CallerName,
  created: string,
  at: string,
): Promise<void> {
  await createRecord(
    store,
    indices,
    {
      kind: "audit",
      id: `correction-${created}`,
      state: "correction",
      createdAt: at,
      updatedAt: at,
      body: {
        action: "correction",
        userId,
        requestedBy,
        caller,
        invalidated: id,
        created,
        ...(reason !== undefined && { reason: redactText(reason) }),
        at,
      },
    },
    { searchable: false },
  );
}
