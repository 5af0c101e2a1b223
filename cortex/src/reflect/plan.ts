import type {
  CandidateDimensionObservation,
  Correction,
  DeltaItem,
  PrivacyLevel,
  ReflectionDelta,
} from "@remram/contract";
import {
  applyConfidenceEvent,
  type ConfidenceConstants,
  clampUnit,
  defaultConfidenceConstants,
} from "../core/confidence.js";
import { contactHandlingFor, privacyWithContacts } from "../core/contacts.js";
import {
  addLink,
  type LinkRelation,
  type MaturingObject,
  type Principal,
  type ScopeKind,
  sameScope,
  sortedUnion,
} from "../core/knowledge.js";
import { invalidate } from "../core/lifecycle.js";
import {
  defaultMatchThresholds,
  findCorrectionTargets,
  type MatchThresholds,
  matchDeltaItem,
  type Neighbour,
} from "../core/match.js";
import { opaqueIdentifier, redact, redactDimensions } from "../core/redaction.js";
import { adjustConfidence } from "./adjust.js";
import { reciprocal, resolveLinkEnd, storedRelation } from "./links.js";
import { findScopeViolations, type ScopeViolation } from "./scope.js";

/** Everything planReflection needs besides the delta; the shell fetches it, the plan stays pure. */
export interface ReflectionContext {
  principal: Principal;
  now: string;
  allowedScopes: readonly ScopeKind[];
  /** Candidates per delta item (same claim subject/predicate, plus nearest neighbours with similarity). */
  itemNeighbours: readonly (readonly Neighbour[])[];
  /** Candidates per correction, looked up the same way from the correction's claim and statement. */
  correctionNeighbours: readonly (readonly Neighbour[])[];
  /** Objects the delta names by id (correction targets, confidence adjustment targets, link ends). */
  targets: ReadonlyMap<string, MaturingObject>;
  /** Issues ids for new objects. */
  newId: () => string;
  thresholds?: MatchThresholds;
  confidence?: ConfidenceConstants;
}

export interface ReflectionOutcome {
  created: string[];
  reinforced: string[];
  invalidated: string[];
  adjusted: string[];
  /** Links added, counting both directions. */
  linksAdded: number;
  /** The delta's own links not stored: both ends one object, or ends in different scopes. */
  linksDropped: number;
  /** Indexes of corrections that matched nothing (nothing was invalidated for them). */
  unmatchedCorrections: number[];
  candidateDimensions: CandidateDimensionObservation[];
}

export type ReflectionPlan =
  | { ok: true; created: MaturingObject[]; updated: MaturingObject[]; outcome: ReflectionOutcome }
  | { ok: false; violations: ScopeViolation[] };

/**
 * Turn a reflection delta into object writes: corrections first (so a replacement never reinforces what it
 * replaces), then items, then confidence adjustments, then the delta's links (whose ends may be the objects its
 * items became). Stored objects are never deleted; corrections end their validity. Returns the violations instead
 * when any part of the delta is outside the principal's scope.
 */
export function planReflection(delta: ReflectionDelta, context: ReflectionContext): ReflectionPlan {
  const violations = findScopeViolations(delta, context.principal, context.targets, context.allowedScopes);
  if (violations.length > 0) return { ok: false, violations };

  const thresholds = context.thresholds ?? defaultMatchThresholds;
  const constants = context.confidence ?? defaultConfidenceConstants;
  const { now } = context;
  const changed = new Map<string, MaturingObject>();
  const createdIds: string[] = [];
  const outcome: ReflectionOutcome = {
    created: createdIds,
    reinforced: [],
    invalidated: [],
    adjusted: [],
    linksAdded: 0,
    linksDropped: 0,
    unmatchedCorrections: [],
    candidateDimensions: delta.candidateDimensions,
  };

  // Later steps must see earlier steps' writes (a reinforced object reinforced again, a fresh link).
  const current = (object: MaturingObject): MaturingObject => changed.get(object.id) ?? object;
  const put = (object: MaturingObject): void => {
    changed.set(object.id, object);
  };
  const link = (fromId: string, relation: LinkRelation, toId: string): void => {
    for (const [id, rel, target] of [
      [fromId, relation, toId],
      [toId, reciprocal[relation], fromId],
    ] as const) {
      const object = changed.get(id) ?? context.targets.get(id) ?? findNeighbour(id);
      if (!object) continue;
      const links = addLink(object.links, { relation: rel, targetId: target });
      if (links.length === object.links.length) continue;
      put({ ...object, links, updatedAt: now });
      outcome.linksAdded += 1;
    }
  };
  const allNeighbours = [...context.itemNeighbours.flat(), ...context.correctionNeighbours.flat()];
  const findNeighbour = (id: string): MaturingObject | undefined =>
    allNeighbours.find((n) => n.object.id === id)?.object;
  // Objects created earlier in this delta are claim-match candidates for later items (no embedding yet).
  const createdNeighbours = (): Neighbour[] =>
    createdIds.map((id) => ({ object: changed.get(id) as MaturingObject }));

  const applyItem = (item: DeltaItem, neighbours: readonly Neighbour[]): string => {
    const candidates = [
      ...neighbours.map((n) => ({ ...n, object: current(n.object) })),
      ...createdNeighbours(),
    ];
    const match = matchDeltaItem(item, candidates, thresholds);
    if (match.action === "reinforce") {
      put(reinforce(current(match.target), item, delta.sessionId, now, constants));
      if (!outcome.reinforced.includes(match.target.id)) outcome.reinforced.push(match.target.id);
      return match.target.id;
    }
    const created = createObject(item, context.newId(), delta.sessionId, now, constants);
    put(created);
    createdIds.push(created.id);
    for (const id of match.relatedIds) link(created.id, "related", id);
    for (const id of match.conflictingIds) link(created.id, "conflicts", id);
    return created.id;
  };

  // What each item and each correction's replacement became (created or reinforced), for the delta's links.
  const itemIds: (string | undefined)[] = [];
  const replacementIds: (string | undefined)[] = [];
  delta.corrections.forEach((correction, index) => {
    const neighbours = [
      ...(context.correctionNeighbours[index] ?? []),
      ...(correction.targetId !== undefined && context.targets.has(correction.targetId)
        ? [{ object: context.targets.get(correction.targetId) as MaturingObject }]
        : []),
    ].map((n) => ({ ...n, object: current(n.object) }));
    const invalidated = findCorrectionTargets(correction, neighbours, thresholds);
    if (invalidated.length === 0) outcome.unmatchedCorrections.push(index);
    for (const target of invalidated) {
      put(invalidate(current(target), now, constants));
      outcome.invalidated.push(target.id);
    }
    if (correction.replacement) {
      const survivors = neighbours.filter((n) => !invalidated.some((t) => t.id === n.object.id));
      const replacementId = applyItem(correction.replacement, survivors);
      replacementIds[index] = replacementId;
      for (const target of invalidated) link(replacementId, "supersedes", target.id);
    }
  });

  delta.items.forEach((item, index) => {
    itemIds[index] = applyItem(item, context.itemNeighbours[index] ?? []);
  });

  for (const adjustment of delta.confidenceAdjustments) {
    const target = changed.get(adjustment.targetId) ?? context.targets.get(adjustment.targetId);
    const adjusted = target && adjustConfidence(target, adjustment, delta.sessionId, now, constants);
    if (!adjusted) continue;
    put(adjusted);
    if (!outcome.adjusted.includes(adjusted.id)) outcome.adjusted.push(adjusted.id);
  }

  for (const deltaLink of delta.links) {
    const fromId = resolveLinkEnd(deltaLink.from, itemIds, replacementIds);
    const toId = resolveLinkEnd(deltaLink.to, itemIds, replacementIds);
    const from = fromId === undefined ? undefined : (changed.get(fromId) ?? context.targets.get(fromId));
    const to = toId === undefined ? undefined : (changed.get(toId) ?? context.targets.get(toId));
    // Like the links matching makes, a link stays inside one scope: the reverse end would otherwise name an
    // object its readers may not see.
    if (!from || !to || from.id === to.id || !sameScope(from.scope, to.scope)) {
      outcome.linksDropped += 1;
      continue;
    }
    link(from.id, storedRelation[deltaLink.relation], to.id);
  }

  const created = createdIds.map((id) => changed.get(id) as MaturingObject);
  const updated = [...changed.values()]
    .filter((o) => !createdIds.includes(o.id))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return { ok: true, created, updated, outcome };
}

/**
 * The delta as it may be stored: credentials and card numbers replaced in every statement and claim, contact
 * details kept only in user-scope items, which then become at least private (core/contacts.ts); in dimension
 * values contact details are replaced whatever the scope (core/redaction.ts `redactDimensions`). Runs before
 * matching and embedding, so nothing downstream sees a live value.
 */
export function redactDelta(delta: ReflectionDelta, defaultPrivacy: PrivacyLevel): ReflectionDelta {
  const redactItem = (item: DeltaItem): DeltaItem => {
    const contacts = contactHandlingFor(item.scope.kind);
    let kept = 0;
    const clean = (text: string): string => {
      const result = redact(text, { contacts });
      kept += result.contactsKept;
      return result.text;
    };
    const statement = clean(item.statement);
    const claim = item.claim && {
      subject: clean(item.claim.subject),
      predicate: clean(item.claim.predicate),
      object: clean(item.claim.object),
    };
    return {
      ...item,
      statement,
      // Referring ids that hold a secret become its hash (redaction.ts opaqueIdentifier).
      sourceTurnIds: item.sourceTurnIds.map(opaqueIdentifier),
      ...(claim && { claim }),
      ...(item.dimensions && { dimensions: redactDimensions(item.dimensions) }),
      ...(kept > 0 && { privacy: privacyWithContacts(item.privacy ?? defaultPrivacy) }),
    };
  };
  const text = (value: string) => redact(value).text;
  const redactCorrection = (correction: Correction): Correction => ({
    ...correction,
    statement: text(correction.statement),
    ...(correction.claim && {
      claim: {
        subject: text(correction.claim.subject),
        predicate: text(correction.claim.predicate),
        ...(correction.claim.object !== undefined && { object: text(correction.claim.object) }),
      },
    }),
    ...(correction.replacement && { replacement: redactItem(correction.replacement) }),
  });
  const turns = <T extends { sourceTurnIds: string[] }>(part: T): T => ({
    ...part,
    sourceTurnIds: part.sourceTurnIds.map(opaqueIdentifier),
  });
  return {
    ...delta,
    sessionId: opaqueIdentifier(delta.sessionId),
    items: delta.items.map(redactItem),
    corrections: delta.corrections.map(redactCorrection).map(turns),
    confidenceAdjustments: delta.confidenceAdjustments.map((a) => turns({ ...a, reason: text(a.reason) })),
    candidateDimensions: delta.candidateDimensions.map((d) => turns({ ...d, value: text(d.value) })),
    links: delta.links.map(turns),
  };
}

function mergeDimensions(
  a: Readonly<Record<string, readonly string[]>>,
  b: Readonly<Record<string, readonly string[]>> | undefined,
): Record<string, string[]> {
  const merged: Record<string, string[]> = {};
  for (const name of sortedUnion(Object.keys(a), Object.keys(b ?? {}))) {
    merged[name] = sortedUnion(a[name] ?? [], b?.[name] ?? []);
  }
  return merged;
}

/** Reinforcement: one more assertion, possibly from a new session and with tool confirmation; revives a demoted object. */
export function reinforce(
  object: MaturingObject,
  item: DeltaItem,
  sessionId: string,
  now: string,
  constants: ConfidenceConstants = defaultConfidenceConstants,
): MaturingObject {
  const newSession = !object.sessionIds.includes(sessionId);
  let confidence = applyConfidenceEvent(object.confidence, { kind: "reinforcement", newSession }, constants);
  if (item.toolConfirmed)
    confidence = applyConfidenceEvent(confidence, { kind: "toolConfirmation" }, constants);
  return {
    ...object,
    confidence,
    reinforcementCount: object.reinforcementCount + 1,
    toolConfirmations: object.toolConfirmations + (item.toolConfirmed ? 1 : 0),
    sessionIds: sortedUnion(object.sessionIds, [sessionId]),
    sourceTurnIds: sortedUnion(object.sourceTurnIds, item.sourceTurnIds),
    dimensions: mergeDimensions(object.dimensions, item.dimensions),
    claim: object.claim ?? item.claim,
    lastReinforcedAt: now,
    updatedAt: now,
    state: "active",
    userDirective: object.userDirective || item.userDirective || undefined,
  };
}

/** A new object from a reflected item; the model's own confidence may move the initial value only so far. */
export function createObject(
  item: DeltaItem,
  id: string,
  sessionId: string,
  now: string,
  constants: ConfidenceConstants = defaultConfidenceConstants,
): MaturingObject {
  const hinted =
    item.confidence === undefined
      ? constants.initial
      : applyConfidenceEvent(
          constants.initial,
          { kind: "explicitAdjustment", delta: item.confidence - constants.initial },
          constants,
        );
  const confidence = item.toolConfirmed
    ? applyConfidenceEvent(hinted, { kind: "toolConfirmation" }, constants)
    : clampUnit(hinted);
  return {
    id,
    type: item.type,
    statement: item.statement,
    claim: item.claim,
    scope: { kind: item.scope.kind, ownerIds: [...item.scope.ownerIds].sort() },
    confidence,
    reinforcementCount: 1,
    toolConfirmations: item.toolConfirmed ? 1 : 0,
    sessionIds: [sessionId],
    sourceTurnIds: [...new Set(item.sourceTurnIds)].sort(),
    dimensions: mergeDimensions({}, item.dimensions),
    createdAt: now,
    lastReinforcedAt: now,
    updatedAt: now,
    validFrom: now,
    state: "active",
    links: [],
    promotion: "none",
    userDirective: item.userDirective || undefined,
  };
}
