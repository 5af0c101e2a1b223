/**
 * POST /remember, the shell around plan.ts: store the save at once (create by id, or reinforce/revive the object an
 * earlier save made), then propose the page that lists it, in one section of the erasure gate.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type {
  ExplicitSaveProposal,
  ExplicitSaveRequest,
  ExplicitSaveResponse,
  ExplicitSaveScope,
  ExplicitSaveType,
  KnowledgeObject,
} from "@remram/contract";
import type { CortexContext } from "../context.js";
import { artifactPath, artifactSourceIds, defaultPromotionCriteria } from "../core/proposal.js";
import { opaqueIdentifier } from "../core/redaction.js";
import { badRequest, forbidden, gone, serviceUnavailable } from "../http-errors.js";
import { ErasureInProgressError, erasureGate } from "../knowledge/erasure-gate.js";
import { toMaturing } from "../knowledge/mapping.js";
import { oneAtATimePer } from "../knowledge/one-at-a-time.js";
import {
  getRecord,
  listRecords,
  type MaturationIndices,
  type ProposalRecordBody,
  type StoredRecord,
  writeRecords,
} from "../knowledge/records.js";
import { loadObjects, scanObjects, scopeFilter, writeObjects } from "../knowledge/repository.js";
import { refusalMessage, refusedWrites } from "../knowledge/tombstones.js";
import { request as storeRequest } from "../store/client.js";
import { knowledgeWriteLines, vectorDocument } from "../store/documents.js";
import { vectorOrNull } from "../store/embedder.js";
import { bulk, bulkFailure } from "../store/writes.js";
import { draftPageProposal, planNewSave, planRepeatSave, saveScope } from "./plan.js";

export interface RememberSettings {
  /** The workspace git repository artifacts are committed to (the current page is read from there). */
  workspaceDir: string;
  artifactsDir: string;
}

/** Proposal records of explicit saves carry this in place of a dream cycle's id. */
export const explicitSaveCycleId = "explicit-save";

interface Logger {
  warn(details: Record<string, unknown>, message: string): void;
}

export async function remember(
  context: CortexContext,
  indices: MaturationIndices,
  settings: RememberSettings,
  asked: ExplicitSaveRequest,
  log: Logger,
): Promise<ExplicitSaveResponse> {
  // Referring ids that hold a secret become its hash (redaction.ts opaqueIdentifier).
  const request: ExplicitSaveRequest = {
    ...asked,
    ...(asked.sessionId !== undefined && { sessionId: opaqueIdentifier(asked.sessionId) }),
    ...(asked.turnId !== undefined && { turnId: opaqueIdentifier(asked.turnId) }),
  };
  const now = context.clock().toISOString();
  const policy = context.policy.get();
  const scoped = saveScope(request, policy.privacy.allowedScopes);
  if (!scoped.ok) throw scoped.status === 400 ? badRequest(scoped.message) : forbidden(scoped.message);
  await refuseErased(context, request, now);
  const planned = planNewSave(request, scoped.scope, { privacy: policy.privacy.defaultLevel, now });
  // The person waits for this answer: the statement is stored lexically at once if its vector is not ready within
  // a moment, and the vector follows (vectorLater).
  const embedding = vectorOrNull(context.embedder, planned.object.statement);
  const vector = await Promise.race([
    embedding,
    new Promise<null>((resolve) => setTimeout(() => resolve(null), inlineEmbeddingWaitMs).unref()),
  ]);
  try {
    return await erasureGate(context.store).shared("an explicit save", async () => {
      // Again right before the write: an erasure may have landed while the statement was embedded.
      await refuseErased(context, request, now);
      const stored = await storeSave(context, planned.object, vector, request, now);
      if (vector === null && stored.status !== "replayed")
        vectorLater(context, stored.object.id, embedding, log);
      const proposal = request.propose
        ? await proposePage(context, indices, settings, stored.object, now).catch(
            (error: unknown): ExplicitSaveProposal => {
              // The save stands; the page follows with the next dream cycle.
              log.warn({ err: error, id: stored.object.id }, "explicit save stored, its page not proposed");
              return {
                status: "deferred",
                reason: "the page could not be proposed now; dream will propose it",
              };
            },
          )
        : ({ status: "deferred", reason: "no page proposal was asked for" } as const);
      return {
        id: stored.object.id,
        status: stored.status,
        statement: stored.object.statement,
        type: stored.object.type as ExplicitSaveType,
        scope: stored.object.scope as ExplicitSaveScope,
        confidence: stored.object.confidence,
        source: "user",
        redactions: planned.redactions,
        embedded: vector !== null,
        proposal,
      };
    });
  } catch (error) {
    if (error instanceof ErasureInProgressError) throw serviceUnavailable(error.message);
    throw error;
  }
}

/** The principal erased after the save was observed: 410, refused for good (a late queue flush). */
async function refuseErased(
  context: CortexContext,
  request: ExplicitSaveRequest,
  now: string,
): Promise<void> {
  const refused = await refusedWrites(context.store, [
    { userId: request.principal.userId, observedAt: request.observedAt ?? now, at: "principal" },
  ]);
  if (refused.length > 0) throw gone(refusalMessage(refused));
}

/** How long a save waits for its statement's vector before storing it lexically and adding the vector after. */
const inlineEmbeddingWaitMs = 200;

/**
 * The vector of a save stored without one, once the model answers: written in a section of the erasure gate and
 * only while the object still exists and is not invalidated, so it never outlives an erasure. Dream backfills
 * what this misses (the model down).
 */
function vectorLater(
  context: CortexContext,
  id: string,
  embedding: Promise<number[] | null>,
  log: Logger,
): void {
  const { store } = context;
  void embedding
    .then(async (vector) => {
      if (vector === null) return;
      await erasureGate(store).shared("an explicit save's vector", async () => {
        const current = (await loadObjects(store, [id])).get(id);
        if (current === undefined || current.status === "invalidated") return;
        const [written] = await bulk(
          store,
          [
            { index: { _index: store.indices.vectors, _id: id } },
            vectorDocument(current, vector, context.embedder?.model ?? null),
          ],
          { timeoutMs: 30_000 },
        );
        if (written?.error !== undefined) throw new Error(written.error.reason);
      });
    })
    .catch((error: unknown) =>
      log.warn({ err: error, id }, "explicit save's vector not written; dream backfills it"),
    );
}

type Stored = { status: ExplicitSaveResponse["status"]; object: KnowledgeObject };

/** Create the object by id; an existing one is the same save again (plan.ts planRepeatSave). Not refreshed here. */
async function storeSave(
  context: CortexContext,
  object: KnowledgeObject,
  vector: number[] | null,
  request: ExplicitSaveRequest,
  now: string,
): Promise<Stored> {
  const { store } = context;
  const model = context.embedder?.model ?? null;
  const [created] = await bulk(store, knowledgeWriteLines(store.indices, "create", object, vector, model), {
    timeoutMs: 30_000,
  });
  if (created?.status === 201) return { status: "created", object };
  if (created?.status !== 409) throw bulkFailure("explicit save not stored", created ? [created] : []);
  const existing = (await loadObjects(store, [object.id])).get(object.id);
  if (existing === undefined)
    throw serviceUnavailable("the saved object went away while it was saved; retry");
  const outcome = planRepeatSave(existing, request, now);
  if (outcome.status === "replayed") return { status: "replayed", object: existing };
  await writeObjects(store, [], [{ object: outcome.object, previous: existing }], { waitForRefresh: false });
  if (outcome.status === "revived" && vector !== null) {
    // An invalidated object's vector was deleted with its validity; found by meaning again from now on.
    await bulk(
      store,
      [
        { index: { _index: store.indices.vectors, _id: object.id } },
        vectorDocument(outcome.object, vector, model),
      ],
      { timeoutMs: 30_000 },
    );
  }
  return { status: outcome.status, object: outcome.object };
}

/** Proposing a page reads the pending proposals of its path and replaces them: one at a time per path. */
const onePerPath = oneAtATimePer();

/** Live objects of the saved one's scope and type that may qualify for its page (core/proposal.ts decides). */
async function pageCandidates(context: CortexContext, saved: KnowledgeObject): Promise<KnowledgeObject[]> {
  const criteria = defaultPromotionCriteria;
  const query = {
    bool: {
      filter: [
        ...scopeFilter(toMaturing(saved).scope),
        { term: { type: saved.type } },
        { term: { status: "active" } },
      ],
      should: [
        { term: { userDirective: true } },
        {
          bool: {
            filter: [
              { range: { confidence: { gte: criteria.minConfidence } } },
              { range: { reinforcementCount: { gte: criteria.minReinforcements } } },
            ],
          },
        },
      ],
      minimum_should_match: 1,
    },
  };
  const found: KnowledgeObject[] = [];
  for await (const page of scanObjects(context.store, query)) found.push(...page.map((hit) => hit.object));
  return found;
}

async function currentFile(workspaceDir: string, path: string): Promise<string | undefined> {
  try {
    return await readFile(join(workspaceDir, path), "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw error;
  }
}

const restriction: KnowledgeObject["privacy"][] = ["public", "household", "private", "secret"];

/**
 * The page proposal for a saved object, created unless the same change is already proposed, promoted or denied.
 * A new proposal replaces the pending ones of its path (as dream's do), so one proposal per page waits.
 */
async function proposePage(
  context: CortexContext,
  indices: MaturationIndices,
  settings: RememberSettings,
  saved: KnowledgeObject,
  now: string,
): Promise<ExplicitSaveProposal> {
  const { store } = context;
  // The candidates are read by search: what was just written (this save, one a moment ago) must be visible.
  await storeRequest(store, "POST", `/${store.indices.knowledge}/_refresh`);
  const view = toMaturing(saved);
  const path = artifactPath(settings.artifactsDir, view.scope, view.type);
  return onePerPath(path, async () => {
    const candidates = await pageCandidates(context, saved);
    const current = await currentFile(settings.workspaceDir, path);
    const { draft } = draftPageProposal(candidates.map(toMaturing), view, current, settings.artifactsDir);
    if (draft === undefined) {
      return artifactSourceIds(current ?? "").includes(saved.id)
        ? { status: "promoted", artifactPath: path }
        : { status: "deferred", reason: "the page does not list it yet and nothing qualifies to change it" };
    }
    const existing = await getRecord<ProposalRecordBody>(store, indices, "proposal", draft.id);
    if (existing?.state === "pending")
      return { status: "pending", id: draft.id, artifactPath: path, title: draft.title, createdNow: false };
    if (existing?.state === "promoted") return { status: "promoted", artifactPath: path };
    // A denied change is never proposed again: the person is told so instead.
    if (existing?.state === "denied") return { status: "denied", id: draft.id, artifactPath: path };
    const sources = [...candidates.filter((o) => o.id !== saved.id), saved].filter((o) =>
      draft.sourceKnowledgeIds.includes(o.id),
    );
    const stale = await listRecords<ProposalRecordBody>(store, indices, "proposal", {
      state: "pending",
      artifactPath: path,
    });
    const record: StoredRecord<ProposalRecordBody> & { artifactPath: string; cycleId: string } = {
      kind: "proposal",
      id: draft.id,
      state: "pending",
      artifactPath: path,
      cycleId: explicitSaveCycleId,
      createdAt: now,
      updatedAt: now,
      body: {
        ...draft,
        rationale: `explicit save: the person asked to keep ${saved.id}; ${draft.rationale}`,
        scope: view.scope,
        privacy: sources.reduce<KnowledgeObject["privacy"]>(
          (most, o) => (restriction.indexOf(o.privacy) > restriction.indexOf(most) ? o.privacy : most),
          "public",
        ),
        cycleId: explicitSaveCycleId,
      },
    };
    await writeRecords(store, indices, [
      ...stale
        .filter((r) => r.id !== draft.id)
        .map((r) => ({
          op: "index" as const,
          record: { ...r, state: "superseded", updatedAt: now, artifactPath: path },
        })),
      { op: "index", record },
    ]);
    // The operator lists pending proposals by search; the next save of this page reads them the same way.
    await storeRequest(store, "POST", `/${indices.records}/_refresh`);
    return { status: "pending", id: draft.id, artifactPath: path, title: draft.title, createdNow: true };
  });
}
