import type { KnowledgeObject } from "@remram/contract";
import { addLink, type MaturingObject } from "../core/knowledge.js";
import type { ProposalDraft } from "../core/proposal.js";
import { applyMaturing, toMaturing } from "../knowledge/mapping.js";
import {
  getRecord,
  listRecords,
  type MaturationIndices,
  type ProposalRecordBody,
  type writeRecords,
} from "../knowledge/records.js";
import type { DocumentVersion, ObjectUpdate } from "../knowledge/repository.js";
import type { CortexStore } from "../store/client.js";
import type { Embedder } from "../store/embedder.js";
import type { DreamPlan } from "./cycle.js";

/**
 * The dream cycle's write phase, from its plan: the knowledge objects it creates and updates, and the records it
 * leaves (review items, dimension promotions, proposals).
 */

export type RecordWrite = Parameters<typeof writeRecords>[2][number];

/** An object the cycle loaded, with the version its update is made conditional on. */
type StoredObject = { object: KnowledgeObject; version: DocumentVersion };

/**
 * The plan's writes as knowledge objects: updates of what the cycle loaded, revivals of demoted principles
 * (`refounded`, by id), and new principles. A new principle without stored evidence is left out.
 */
export function objectChanges(
  writes: readonly MaturingObject[],
  stored: ReadonlyMap<string, StoredObject>,
  refounded: ReadonlyMap<string, KnowledgeObject>,
): { created: KnowledgeObject[]; updated: ObjectUpdate[] } {
  const created: KnowledgeObject[] = [];
  const updated: ObjectUpdate[] = [];
  for (const object of writes) {
    const base = stored.get(object.id);
    if (base) {
      updated.push({
        object: applyMaturing(base.object, object),
        previous: base.object,
        readAt: base.version,
      });
      continue;
    }
    // A principle founded again under the id of one that was demoted revives it, keeping its evidence links.
    const demoted = refounded.get(object.id);
    if (demoted) {
      const before = toMaturing(demoted);
      const revived = {
        ...object,
        links: before.links.reduce((all, link) => addLink(all, link), object.links),
        createdAt: before.createdAt,
        reinforcementCount: before.reinforcementCount + 1,
      };
      updated.push({ object: applyMaturing(demoted, revived), previous: demoted });
      continue;
    }
    // A new principle: provenance "dream"; privacy and consent from its most restrictive evidence.
    const evidence = object.links.flatMap((l) =>
      l.relation === "evidence" ? [stored.get(l.targetId)?.object] : [],
    );
    const template = evidence.find((e) => e !== undefined);
    if (!template) continue;
    created.push(
      applyMaturing(
        {
          ...template,
          provenance: {
            key: `dream:${object.id}`,
            source: "dream",
            sourceTurnIds: [...object.sourceTurnIds],
            observedAt: object.createdAt,
            ingestedAt: object.createdAt,
          },
          privacy: mostRestrictive(evidence.flatMap((e) => (e ? [e.privacy] : []))),
          usageCount: 0,
          lastUsedAt: null,
        },
        object,
      ),
    );
  }
  return { created, updated };
}

/** Vectors for new principles, null for each when there is no model or it fails (they are backfilled later). */
export async function principleVectors(
  embedder: Embedder | null,
  created: readonly KnowledgeObject[],
): Promise<(number[] | null)[]> {
  if (embedder === null || created.length === 0) return created.map(() => null);
  try {
    return await embedder.embedMany(created.map((o) => o.statement));
  } catch {
    return created.map(() => null);
  }
}

/** Records of the plan's review items (created once) and dimension promotions (replaced). */
export function reviewAndPromotionRecords(
  plan: Pick<DreamPlan, "reviewItems" | "dimensionPromotions">,
  now: string,
): RecordWrite[] {
  const records: RecordWrite[] = [];
  for (const review of plan.reviewItems) {
    records.push({
      op: "create",
      record: {
        kind: "review",
        id: review.id,
        state: "open",
        createdAt: now,
        updatedAt: now,
        body: review,
      },
    });
  }
  for (const promotion of plan.dimensionPromotions) {
    records.push({
      op: "index",
      record: {
        kind: "dimensionPromotion",
        id: promotion.name,
        state: "proposed",
        createdAt: now,
        updatedAt: now,
        body: promotion,
      },
    });
  }
  return records;
}

/** A proposal's record, and stale pending proposals for the same path marked superseded. Nothing for a known id. */
export async function proposalRecords(
  store: CortexStore,
  indices: MaturationIndices,
  proposal: ProposalDraft,
  cycleId: string,
  stored: ReadonlyMap<string, { object: KnowledgeObject }>,
  now: string,
): Promise<RecordWrite[]> {
  // A denied proposal keeps its id, so the same change is never proposed again.
  const existing = await getRecord<ProposalRecordBody>(store, indices, "proposal", proposal.id);
  if (existing) return [];
  const stale = await listRecords<ProposalRecordBody>(store, indices, "proposal", {
    state: "pending",
    artifactPath: proposal.artifactPath,
  });
  const sources = proposal.sourceKnowledgeIds.flatMap((id) => {
    const object = stored.get(id)?.object;
    return object ? [object] : [];
  });
  const first = sources[0];
  return [
    ...stale.map((record) => ({
      op: "index" as const,
      record: { ...record, state: "superseded", updatedAt: now, artifactPath: proposal.artifactPath },
    })),
    {
      op: "create",
      record: {
        kind: "proposal",
        id: proposal.id,
        state: "pending",
        artifactPath: proposal.artifactPath,
        cycleId,
        createdAt: now,
        updatedAt: now,
        body: {
          ...proposal,
          scope: first ? toMaturing(first).scope : { kind: "shared", ownerIds: [] },
          privacy: mostRestrictive(sources.map((s) => s.privacy)),
          cycleId,
        },
      },
    },
  ];
}

const restriction: KnowledgeObject["privacy"][] = ["public", "household", "private", "secret"];

function mostRestrictive(levels: readonly KnowledgeObject["privacy"][]): KnowledgeObject["privacy"] {
  return levels.reduce<KnowledgeObject["privacy"]>(
    (most, level) => (restriction.indexOf(level) > restriction.indexOf(most) ? level : most),
    "public",
  );
}
