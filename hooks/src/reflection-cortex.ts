import {
  type AdjustmentEffect,
  type ConfidenceAdjustment,
  type Correction,
  type DeltaItem,
  type DeltaLink,
  type DeltaLinkEnd,
  reflectionDeltaSchema,
} from "@remram/contract";
import { z } from "zod";
import { toIdentifier } from "./principal.js";
import type { ReflectionDelta, ReflectionJob } from "./reflection.js";
import { type GroundingSources, isGrounded, itemDropReason } from "./reflection-gate.js";
import { handleIndex, type ReflectionTarget } from "./reflection-targets.js";

/**
 * From what the reflection model wrote (reflection.ts ReflectionDeltaSchema) to Cortex's reflection delta
 * (@remram/contract reflectionDeltaSchema). Pure. The plugin supplies what only it knows: the scope the session
 * allows (the person's own, or their household's when the session has one; never shared), the ids behind the
 * prompt's handles, the session and the source turn.
 */

const principalSchema = z.strictObject({
  userId: z.string(),
  householdId: z.string().optional(),
  agentId: z.string(),
});

/**
 * Cortex's delta, as queued on disk and posted to /reflect with the principal beside it: the contract's own schema,
 * so a delta the queue holds is one Cortex accepts (deltas queued by earlier versions of the plugin fit it too).
 */
export const CortexReflectionDeltaSchema = reflectionDeltaSchema;
export type CortexReflectionDelta = z.output<typeof reflectionDeltaSchema>;

/** A /reflect call waiting in the durable delivery queue until Cortex takes it. */
export const ReflectRequestSchema = z.strictObject({
  principal: principalSchema,
  delta: CortexReflectionDeltaSchema,
});
export type ReflectRequest = z.infer<typeof ReflectRequestSchema>;

/** What the conversion left out of the model's reply, by reason (counted and logged by the service). */
export interface DroppedParts {
  /** Items that only restate what the run was shown (injected-content.ts): not new knowledge. */
  injected: number;
  /** Handles that name no listed memory item or no usable item of the reply. */
  unresolved: number;
  /** Adjustments of an item the same reply corrects or replaces, and repeated adjustments or links. */
  redundant: number;
  /** Items the person never said: not grounded in their words of the turn (reflection-gate.ts). */
  ungrounded: number;
  /** Items that are no statement (a word, a question) or say nothing lasting (small talk, a passing state). */
  notKnowledge: number;
}

export interface CortexDeltaResult {
  delta: CortexReflectionDelta;
  dropped: DroppedParts;
}

const defaultReason: Record<AdjustmentEffect, string> = {
  reinforce: "the conversation confirmed it",
  weaken: "the conversation put it in doubt",
  contradict: "the conversation said it is wrong",
};

/** Dimension names are lowercase keys starting with a letter; anything else is not a dimension. */
function dimensionName(raw: string): string | undefined {
  const name = raw
    .trim()
    .toLowerCase()
    .replace(/[^a-z0-9_]+/g, "_")
    .slice(0, 63);
  return /^[a-z][a-z0-9_]*$/.test(name) ? name : undefined;
}

/**
 * The model's reply as Cortex's delta. Items are the person's (scope user) unless the model says household and the
 * session has one. An item that `updates` a listed memory item becomes a correction of that id with the item as its
 * replacement (kind correction: without one); adjustments and links name listed memory items (m1, …) by id and the
 * reply's own items (n1, …) by their place in the delta. Whatever cannot be resolved is left out and counted.
 */
export function reflectionToCortex(
  reply: ReflectionDelta,
  job: ReflectionJob,
  isInjected: (statement: string) => boolean = () => false,
): CortexDeltaResult {
  const dropped: DroppedParts = { injected: 0, unresolved: 0, redundant: 0, ungrounded: 0, notKnowledge: 0 };
  const { principal } = job;
  const targets = job.targets ?? [];
  const sourceTurnIds = [(job.runId ?? job.jobId).slice(0, 128)];
  const userScope = { kind: "user" as const, ownerIds: [principal.userId] };
  const householdScope =
    principal.householdId === undefined
      ? undefined
      : { kind: "household" as const, ownerIds: [principal.householdId] };
  const scopeFor = (wanted: "user" | "household" | undefined) =>
    wanted === "household" && householdScope !== undefined ? householdScope : userScope;
  const target = (handle: string): ReflectionTarget | undefined => {
    const index = handleIndex(handle, "m", targets.length);
    const found = index === undefined ? undefined : targets[index];
    // A household item offered to a session without a household cannot be written from it.
    return found?.scope === "household" && householdScope === undefined ? undefined : found;
  };

  const items: DeltaItem[] = [];
  const corrections: Correction[] = [];
  /** What each item of the reply became in the delta, for links naming it (n1, …). */
  const itemEnds: (DeltaLinkEnd | undefined)[] = [];
  /** Memory items this reply corrects or replaces: adjusting them as well would say two things at once. */
  const updated = new Set<string>();

  reply.items.forEach((item, index) => {
    const updates = item.updates === undefined ? undefined : target(item.updates);
    if (item.updates !== undefined && updates === undefined) dropped.unresolved += 1;
    // What only restates what the run was shown is not new knowledge, not even as an update of it (that would
    // invalidate the object and store its own text again). A correction naming its target stores no statement.
    const describesTarget = item.kind === "correction" && updates !== undefined;
    if (!describesTarget && isInjected(item.statement)) {
      dropped.injected += 1;
      return;
    }
    // What the person did not say is not theirs to remember: the model's own invention, the assistant's reply
    // (its mistakes, the memory it echoed) or the memory the run was shown.
    const unkept =
      job.userText === undefined ? undefined : itemDropReason(item.statement, groundingFor(job, updates));
    if (unkept === "ungrounded") dropped.ungrounded += 1;
    else if (unkept !== undefined) dropped.notKnowledge += 1;
    if (unkept !== undefined) return;
    const targetScope = updates === undefined ? undefined : scopeFor(updates.scope);
    const claim = item.claim === undefined ? {} : { claim: item.claim };
    if (item.kind === "correction") {
      corrections.push({
        ...(updates === undefined ? {} : { targetId: updates.id }),
        ...claim,
        statement: item.statement,
        scope: targetScope ?? scopeFor(item.scope),
        sourceTurnIds,
      });
      if (updates !== undefined) updated.add(updates.id);
      return;
    }
    const knowledge: DeltaItem = {
      type: item.kind,
      statement: item.statement,
      ...claim,
      // A replacement stays where what it replaces was, unless the model says otherwise.
      scope: item.scope === undefined && targetScope !== undefined ? targetScope : scopeFor(item.scope),
      sourceTurnIds,
      ...(item.confidence === undefined ? {} : { confidence: item.confidence }),
    };
    if (updates !== undefined && targetScope !== undefined) {
      corrections.push({
        targetId: updates.id,
        statement: updates.statement,
        scope: targetScope,
        sourceTurnIds,
        replacement: knowledge,
      });
      updated.add(updates.id);
      itemEnds[index] = { replacement: corrections.length - 1 };
      return;
    }
    items.push(knowledge);
    itemEnds[index] = { item: items.length - 1 };
  });

  const confidenceAdjustments: ConfidenceAdjustment[] = [];
  for (const adjustment of reply.adjustments) {
    const adjusted = target(adjustment.target);
    if (adjusted === undefined) {
      dropped.unresolved += 1;
    } else if (updated.has(adjusted.id) || confidenceAdjustments.some((a) => a.targetId === adjusted.id)) {
      dropped.redundant += 1;
    } else {
      confidenceAdjustments.push({
        targetId: adjusted.id,
        effect: adjustment.effect,
        reason: adjustment.reason ?? defaultReason[adjustment.effect],
        sourceTurnIds,
      });
    }
  }

  const linkEnd = (handle: string): DeltaLinkEnd | undefined => {
    const memory = target(handle);
    if (memory !== undefined) return { id: memory.id };
    const index = handleIndex(handle, "n", reply.items.length);
    return index === undefined ? undefined : itemEnds[index];
  };
  const links: DeltaLink[] = [];
  for (const link of reply.links) {
    const from = linkEnd(link.from);
    const to = linkEnd(link.to);
    if (from === undefined || to === undefined) {
      dropped.unresolved += 1;
      continue;
    }
    const key = (end: DeltaLinkEnd) => JSON.stringify(end);
    const same = (l: DeltaLink) =>
      key(l.from) === key(from) && key(l.to) === key(to) && l.relation === link.relation;
    if (key(from) === key(to) || links.some(same)) {
      dropped.redundant += 1;
      continue;
    }
    links.push({ from, relation: link.relation, to, sourceTurnIds });
  }

  const candidateDimensions = reply.candidateDimensions.flatMap((dimension) => {
    const name = dimensionName(dimension.name);
    if (name === undefined) return [];
    // A dimension's value is a claim about the person too: one they never said names nothing of theirs.
    if (job.userText !== undefined && !isGrounded(dimension.value, groundingFor(job, undefined))) {
      dropped.ungrounded += 1;
      return [];
    }
    return [{ name, value: dimension.value.slice(0, 128), sourceTurnIds }];
  });
  return {
    delta: {
      sessionId: toIdentifier(job.sessionKey),
      observedAt: job.createdAt,
      items,
      corrections,
      confidenceAdjustments,
      candidateDimensions,
      links,
    },
    dropped,
  };
}

/**
 * What an item is checked against: the person's words, and words it may borrow without them being new (their own
 * ids, and the statement it corrects or replaces).
 */
function groundingFor(job: ReflectionJob, updates: ReflectionTarget | undefined): GroundingSources {
  const names = [job.principal.userId, job.principal.householdId ?? ""].map((id) =>
    id.replace(/[:._-]+/g, " "),
  );
  return {
    userText: job.userText ?? "",
    context: [...names, ...(updates === undefined ? [] : [updates.statement])],
  };
}

/** reflectionToCortex without the count of what was left out. */
export function toCortexDelta(reply: ReflectionDelta, job: ReflectionJob): CortexReflectionDelta {
  return reflectionToCortex(reply, job).delta;
}
