/** /ingest: plan (redact, key, chunk), embed, create durably by id, report duplicates. */

import type {
  Chunk,
  DimensionPolicy,
  IngestRequest,
  IngestResponse,
  KnowledgeObject,
} from "@remram/contract";
import { forgetSubjects, forgottenRefusal } from "../core/forgotten.js";
import { planIngest } from "../core/ingest-plan.js";
import { gone } from "../http-errors.js";
import { forgottenAmong } from "../knowledge/forgotten.js";
import { refusalMessage, refusedWrites } from "../knowledge/tombstones.js";
import type { CortexMetrics } from "../metrics.js";
import type { CortexStore } from "../store/client.js";
import { recordCandidateDimensions } from "../store/counters.js";
import { chunkDocument, chunkEmbeddingText, knowledgeDocument, vectorDocument } from "../store/documents.js";
import type { Embedder } from "../store/embedder.js";
import { createDocuments } from "../store/writes.js";

export interface IngestDeps {
  store: CortexStore;
  embedder: Embedder | null;
  policy: () => DimensionPolicy;
  metrics: CortexMetrics;
  /** Failures of after-the-ack bookkeeping (candidate dimensions) are logged, never returned. */
  onBackgroundError: (error: unknown) => void;
}

export async function ingest(deps: IngestDeps, request: IngestRequest, now: Date): Promise<IngestResponse> {
  const policy = deps.policy();
  const nowIso = now.toISOString();
  // An erased person's data observed before the erasure (a late queue flush) is refused whole: the hooks then
  // resend the batch one event at a time, so the other events still go in.
  const observed = request.events.flatMap((event, index) =>
    event.owner.userId === undefined
      ? []
      : [{ userId: event.owner.userId, observedAt: event.observedAt ?? nowIso, at: `events.${index}` }],
  );
  const refuseErased = async () => {
    const refused = await refusedWrites(deps.store, observed);
    if (refused.length > 0) throw gone(refusalMessage(refused));
  };
  await refuseErased();
  const planned = planIngest(request.events, { privacy: policy.privacy.defaultLevel, now: nowIso });
  // Knowledge a person asked to forget is refused for good, whenever observed: the same capture replayed (its id)
  // or the same words again in the same owner's knowledge (its statement).
  const knowledgeChecks = planned.flatMap((item) =>
    item.knowledge === null ? [] : [{ at: `events.${item.index}`, subjects: forgetSubjects(item.knowledge) }],
  );
  const refuseForgotten = async () => {
    const marks = await forgottenAmong(
      deps.store,
      knowledgeChecks.flatMap((check) => check.subjects.map((s) => s.subject)),
    );
    if (marks.size === 0) return;
    const refused = knowledgeChecks.filter((check) => check.subjects.some((s) => marks.has(s.subject)));
    const [first] = marks.values();
    throw gone(
      forgottenRefusal(
        refused.map((check) => check.at),
        first?.forgottenAt ?? "?",
      ),
    );
  };
  await refuseForgotten();

  // Each distinct id once; a repeat inside the batch is a duplicate of its first occurrence.
  const documents = new Map<
    string,
    { text: string } & ({ kind: "knowledge"; item: KnowledgeObject } | { kind: "chunk"; item: Chunk })
  >();
  for (const item of planned) {
    if (item.knowledge !== null && !documents.has(item.knowledge.id)) {
      documents.set(item.knowledge.id, {
        kind: "knowledge",
        text: item.knowledge.statement,
        item: item.knowledge,
      });
    }
    for (const chunk of item.chunks) {
      if (!documents.has(chunk.id)) {
        documents.set(chunk.id, { kind: "chunk", text: chunkEmbeddingText(chunk), item: chunk });
      }
    }
  }

  const entries = [...documents.entries()];
  let vectors: number[][] | null = null;
  if (deps.embedder !== null && entries.length > 0) {
    try {
      vectors = await deps.embedder.embedMany(entries.map(([, entry]) => entry.text));
    } catch (error) {
      // Stored without vectors rather than refused: the write must not depend on the embedding model.
      deps.onBackgroundError(error);
      vectors = null;
    }
  }
  const model = deps.embedder?.model ?? null;
  const { indices } = deps.store;
  const written = entries.map(([id, entry], position) => {
    const vector = vectors?.[position] ?? null;
    return entry.kind === "knowledge"
      ? { index: indices.knowledge, id, document: knowledgeDocument(entry.item) }
      : { index: indices.chunks, id, document: chunkDocument(entry.item, vector, model) };
  });
  // Knowledge vectors go to their own index in the same request; their outcomes follow the documents'.
  const knowledgeVectors = entries.flatMap(([id, entry], position) => {
    const vector = vectors?.[position];
    return entry.kind === "knowledge" && vector !== undefined
      ? [{ index: indices.vectors, id, document: vectorDocument(entry.item, vector, model) }]
      : [];
  });
  // Again right before the write: an erasure or a forget may have landed while the batch was embedded (up to minutes).
  await refuseErased();
  await refuseForgotten();
  const results = await createDocuments(deps.store, [...written, ...knowledgeVectors]);
  const outcomes = new Map(written.map((document, position) => [document.id, results[position]]));

  const claimed = new Set<string>();
  const items = planned.map((item) => {
    const ids = item.knowledge !== null ? [item.knowledge.id] : item.chunks.map((chunk) => chunk.id);
    const createdHere = ids.some((id) => outcomes.get(id) === "created" && !claimed.has(id));
    for (const id of ids) claimed.add(id);
    const status = createdHere ? ("created" as const) : ("duplicate" as const);
    deps.metrics.ingestItems.inc({ kind: item.kind, status });
    return {
      index: item.index,
      kind: item.kind,
      status,
      provenanceKey: item.provenanceKey,
      ids,
      redactions: item.redactions,
    };
  });

  const canonical = new Set(policy.dimensions.map((dimension) => dimension.name));
  const observations = new Map<string, { occurrences: number; values: string[] }>();
  for (const item of planned) {
    if (items[item.index]?.status !== "created") continue;
    const dimensions = item.knowledge?.dimensions ?? item.chunks[0]?.dimensions ?? {};
    for (const [name, values] of Object.entries(dimensions)) {
      if (canonical.has(name)) continue;
      const observation = observations.get(name) ?? { occurrences: 0, values: [] };
      observation.occurrences += 1;
      observation.values.push(...values);
      observations.set(name, observation);
    }
  }
  void recordCandidateDimensions(deps.store, observations, nowIso).catch(deps.onBackgroundError);

  const created = items.filter((item) => item.status === "created").length;
  return {
    created,
    duplicates: items.length - created,
    embedded: vectors !== null || entries.length === 0,
    items,
  };
}
