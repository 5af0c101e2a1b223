import { createHash } from "node:crypto";
import type {
  DeltaItem,
  KnowledgeObject,
  ReflectionDelta,
  Principal as StoredPrincipal,
} from "@remram/contract";
import type { CortexContext } from "../context.js";
import { canonicalJson } from "../core/canonical-json.js";
import { erasureSubject } from "../core/erasure.js";
import { maturingStatementSubject, withoutForgotten } from "../core/forgotten.js";
import { knowledgeIdFor } from "../core/ingest-plan.js";
import type { MaturingObject } from "../core/knowledge.js";
import type { Neighbour } from "../core/match.js";
import { gone } from "../http-errors.js";
import { forgottenAmong } from "../knowledge/forgotten.js";
import { applyMaturing, ownerOf, toMaturing } from "../knowledge/mapping.js";
import { createRecord, getRecord, type MaturationIndices } from "../knowledge/records.js";
import { findCandidates, loadObjects, normaliseClaim, writeObjects } from "../knowledge/repository.js";
import { refusalMessage, refusedWrites } from "../knowledge/tombstones.js";
import { recordCandidateDimensions } from "../store/counters.js";
import { vectorsOrNulls } from "../store/embedder.js";
import { planReflection, type ReflectionOutcome, redactDelta } from "./plan.js";
import { findScopeViolations, type ScopeViolation } from "./scope.js";

/** The shell around planReflection: load candidates and targets, plan, write, count candidate dimensions. */

export type ReflectResult =
  | { ok: true; outcome: ReflectionOutcome; replayed: boolean }
  | { ok: false; violations: ScopeViolation[] };

const neighboursPerItem = 10;

export async function reflect(
  context: CortexContext,
  indices: MaturationIndices,
  principal: StoredPrincipal,
  delta: ReflectionDelta,
): Promise<ReflectResult> {
  const { store } = context;
  const now = context.clock().toISOString();
  // A retried reflection (same principal, same delta) is applied once; the receipt answers the retry.
  const deltaKey = createHash("sha256").update(canonicalJson({ principal, delta })).digest("hex");
  await refuseErased(context, principal, delta, now);
  const receipt = await getRecord<ReflectionOutcome | { erased: string }>(
    store,
    indices,
    "reflectReceipt",
    deltaKey,
  );
  if (receipt && "erased" in receipt.body) {
    // Applied before its person's erasure, which emptied the receipt: applying it again would undo the erasure.
    throw gone(
      `this delta was applied before an erasure at ${receipt.body.erased}; refused for good, do not retry`,
    );
  }
  if (receipt) return { ok: true, outcome: receipt.body as ReflectionOutcome, replayed: true };

  const targetIds = [
    ...delta.corrections.flatMap((c) => (c.targetId === undefined ? [] : [c.targetId])),
    ...delta.confidenceAdjustments.map((a) => a.targetId),
    ...delta.links.flatMap((l) => [l.from, l.to].flatMap((end) => ("id" in end ? [end.id] : []))),
  ];
  const stored = new Map<string, KnowledgeObject>(await loadObjects(store, targetIds));
  // Scope first: a delta outside the principal's scope is refused before it costs an embedding per item.
  const violations = findScopeViolations(
    delta,
    principal,
    new Map([...stored].map(([id, object]) => [id, toMaturing(object)])),
    context.policy.get().privacy.allowedScopes,
  );
  if (violations.length > 0) return { ok: false, violations };
  // Redacted before matching, embedding and storage; claims are normalised after (placeholders are found in case).
  const clean = redactDelta(delta, context.policy.get().privacy.defaultLevel);
  const withClaim = (item: DeltaItem): DeltaItem =>
    item.claim ? { ...item, claim: normaliseClaim(item.claim) } : item;
  const items = clean.items.map(withClaim);
  const corrections = clean.corrections.map((c) => ({
    ...c,
    replacement: c.replacement ? withClaim(c.replacement) : undefined,
  }));
  // Without vectors reflection still matches by claim; semantic matching waits for the next reflection.
  const vectors = await vectorsOrNulls(context.embedder, [
    ...items.map((i) => i.statement),
    ...corrections.map((c) => c.statement),
  ]);
  const replacementVectors = await vectorsOrNulls(
    context.embedder,
    corrections.flatMap((c) => (c.replacement ? [c.replacement.statement] : [])),
  );
  const candidateHits = await findCandidates(
    store,
    [
      ...items.map((item, i) => ({ scope: item.scope, claim: item.claim, vector: vectors[i] ?? undefined })),
      ...corrections.map((c, i) => ({
        scope: c.scope,
        claim:
          c.claim?.subject && c.claim.predicate
            ? { subject: c.claim.subject, predicate: c.claim.predicate }
            : undefined,
        vector: vectors[items.length + i] ?? undefined,
      })),
    ],
    neighboursPerItem,
  );
  for (const hit of candidateHits.flat()) stored.set(hit.object.id, hit.object);
  const asNeighbours = (hits: (typeof candidateHits)[number] | undefined): Neighbour[] =>
    (hits ?? []).map((hit) => ({ object: toMaturing(hit.object), similarity: hit.similarity }));

  let sequence = 0;
  const plan = planReflection(
    { ...clean, items, corrections },
    {
      principal,
      now,
      allowedScopes: context.policy.get().privacy.allowedScopes,
      itemNeighbours: items.map((_, i) => asNeighbours(candidateHits[i])),
      correctionNeighbours: corrections.map((_, i) => asNeighbours(candidateHits[items.length + i])),
      targets: new Map([...stored].map(([id, object]) => [id, toMaturing(object)])),
      newId: () => knowledgeIdFor(`reflect:${deltaKey}:${sequence++}`),
    },
  );
  if (!plan.ok) return plan;
  // What the person asked to forget is not created again, however often a model reflects it.
  const dropped = await forgottenCreations(context, plan.created);
  const kept = withoutForgotten(plan.created, plan.updated, dropped);
  const outcome: ReflectionOutcome =
    dropped.size === 0
      ? plan.outcome
      : { ...plan.outcome, created: plan.outcome.created.filter((id) => !dropped.has(id)) };

  const replacements = corrections.flatMap((c) => (c.replacement ? [c.replacement] : []));
  const statementVectors = new Map<string, number[] | null>();
  items.forEach((item, i) => {
    statementVectors.set(item.statement, vectors[i] ?? null);
  });
  replacements.forEach((item, i) => {
    statementVectors.set(item.statement, replacementVectors[i] ?? null);
  });
  const allItems = [...items, ...replacements];
  const created = kept.created.map((object) => {
    const item = allItems.find((i) => i.statement === object.statement);
    return {
      object: newKnowledgeObject(
        object,
        principal,
        clean.sessionId,
        item,
        context.policy.get().privacy.defaultLevel,
      ),
      embedding: statementVectors.get(object.statement) ?? null,
      embeddingModel: context.embedder?.model ?? null,
    };
  });
  const updated = kept.updated.flatMap((object) => {
    const previous = stored.get(object.id);
    return previous ? [{ object: applyMaturing(previous, object), previous }] : [];
  });
  // Again right before the write: an erasure may have landed while the delta was embedded and matched, and the
  // targets loaded before it would be written back.
  await refuseErased(context, principal, delta, now);
  await writeObjects(store, created, updated);

  const observations = new Map<string, { occurrences: number; values: string[] }>();
  for (const { name, value } of outcome.candidateDimensions) {
    const entry = observations.get(name) ?? { occurrences: 0, values: [] };
    observations.set(name, { occurrences: entry.occurrences + 1, values: [...entry.values, value] });
  }
  await recordCandidateDimensions(store, observations, now);
  // Read only by id (the retry check above), so it need not wait for a refresh.
  await createRecord(
    store,
    indices,
    {
      kind: "reflectReceipt",
      id: deltaKey,
      // Whose delta it was, so an erasure finds the receipt (its outcome may name no object of theirs).
      subject: erasureSubject(principal.userId),
      createdAt: now,
      updatedAt: now,
      body: outcome,
    },
    { searchable: false },
  );
  return { ok: true, outcome, replayed: false };
}

/** The ids of planned objects whose statement their owner's forget refuses (core/forgotten.ts). */
async function forgottenCreations(
  { store }: CortexContext,
  created: readonly MaturingObject[],
): Promise<Set<string>> {
  const subjects = created.flatMap((object) => {
    const subject = maturingStatementSubject(object);
    return subject === undefined ? [] : [{ id: object.id, subject }];
  });
  const marks = await forgottenAmong(
    store,
    subjects.map((s) => s.subject),
  );
  return new Set(subjects.filter((s) => marks.has(s.subject)).map((s) => s.id));
}

/** The principal and every user a delta writes for, when erased after the delta was observed: 410. */
async function refuseErased(
  context: CortexContext,
  principal: StoredPrincipal,
  delta: ReflectionDelta,
  now: string,
): Promise<void> {
  const observedAt = delta.observedAt ?? now;
  const users = new Set([principal.userId]);
  for (const { scope } of [...delta.items, ...delta.corrections]) {
    if (scope.kind === "user") for (const id of scope.ownerIds) users.add(id);
  }
  const refused = await refusedWrites(
    context.store,
    [...users].map((userId) => ({ userId, observedAt, at: "delta" })),
  );
  if (refused.length > 0) throw gone(refusalMessage(refused.slice(0, 1)));
}

function newKnowledgeObject(
  object: MaturingObject,
  principal: StoredPrincipal,
  sessionId: string,
  item: DeltaItem | undefined,
  defaultPrivacy: KnowledgeObject["privacy"],
): KnowledgeObject {
  return applyMaturing(
    {
      statement: object.statement,
      type: object.type,
      provenance: {
        key: `reflect:${object.id}`,
        source: item?.toolConfirmed ? "tool" : "reflection",
        sessionId,
        agentId: principal.agentId,
        sourceTurnIds: [...object.sourceTurnIds],
        observedAt: object.createdAt,
        ingestedAt: object.createdAt,
      },
      scope: object.scope.kind,
      owner: ownerOf(object.scope),
      privacy: item?.privacy ?? defaultPrivacy,
      consent: { retrieval: true, agents: ["*"] },
      dimensions: {},
      confidence: object.confidence,
      reinforcementCount: object.reinforcementCount,
      toolConfirmations: object.toolConfirmations,
      sessionIds: [...object.sessionIds],
      lastReinforcedAt: object.lastReinforcedAt,
      lastDecayedAt: null,
      userDirective: false,
      usageCount: 0,
      lastUsedAt: null,
      validity: { validFrom: object.validFrom, invalidAt: null },
      links: [],
      promotionState: "none",
      status: "active",
      createdAt: object.createdAt,
      updatedAt: object.updatedAt,
    },
    object,
  );
}
