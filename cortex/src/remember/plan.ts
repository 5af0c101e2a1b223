/**
 * Explicit saves ("remember that …", "#canon"), pure: the scope a save may write, the knowledge object it stores,
 * what a repeated save does to the stored one, and the page proposal that lists it. `now` and the policy's
 * defaults come in as data; the service (service.ts) does the reads and writes.
 */
import type {
  ExplicitSaveRequest,
  ExplicitSaveScope,
  KnowledgeObject,
  PrivacyLevel,
  Scope as StoredScopeKind,
} from "@remram/contract";
import { applyConfidenceEvent, userDirectiveConfidence } from "../core/confidence.js";
import { contactHandlingFor, privacyWithContacts } from "../core/contacts.js";
import { knowledgeIdFor, normalizeStatement, sha256 } from "../core/ingest-plan.js";
import { isLive, type MaturingObject, type Scope, sortedUnion } from "../core/knowledge.js";
import { artifactPath, generateProposals, type ProposalDraft } from "../core/proposal.js";
import { redact, redactIdentifier, withinBound } from "../core/redaction.js";

/** Confidence of an explicit save: the person's own directive (core/confidence.ts explains the value). */
export const explicitSaveConfidence = userDirectiveConfidence;

/** Channel names are free text (contract bound 128): credentials and contact details never stay in them. */
const channelChars = 128;
const keyChars = 512;

export type SaveScopeResult = { ok: true; scope: Scope } | { ok: false; status: 400 | 403; message: string };

/**
 * The scope a save writes, from the principal alone: the person's own, or their household's when they said so and
 * the session has one. The dimension policy's allowedScopes may forbid either.
 */
export function saveScope(
  request: Pick<ExplicitSaveRequest, "principal" | "scope">,
  allowedScopes: readonly StoredScopeKind[],
): SaveScopeResult {
  const { principal } = request;
  if (request.scope === "household" && principal.householdId === undefined) {
    return {
      ok: false,
      status: 400,
      message: "scope 'household' needs principal.householdId: this session belongs to no household",
    };
  }
  if (!allowedScopes.includes(request.scope)) {
    return {
      ok: false,
      status: 403,
      message: `scope ${request.scope} is not allowed by the dimension policy`,
    };
  }
  const owner = request.scope === "user" ? principal.userId : (principal.householdId as string);
  return { ok: true, scope: { kind: request.scope, ownerIds: [owner] } };
}

/**
 * The idempotency key of a save: its scope, type and redacted statement (case, spacing and final punctuation
 * aside). The same save twice, from any turn or session, is one object; saves have keys of their own, so an
 * ingested or reflected object with the same words stays a separate object.
 */
export function explicitSaveKey(scope: Scope, type: string, redactedStatement: string): string {
  return `explicit-save:${scope.kind}/${scope.ownerIds[0] ?? "-"}:${type}:${sha256(normalizeStatement(redactedStatement))}`;
}

export interface PlannedSave {
  object: KnowledgeObject;
  redactions: number;
}

/** The object a first save stores: redacted like every write, provenance `user`, the user-directive flag. */
export function planNewSave(
  request: ExplicitSaveRequest,
  scope: Scope,
  defaults: { privacy: PrivacyLevel; now: string },
): PlannedSave {
  const kind = scope.kind as ExplicitSaveScope;
  const cleaned = redact(request.statement, { contacts: contactHandlingFor(kind) });
  const channel = request.channel === undefined ? undefined : redact(request.channel);
  const key = redactIdentifier(explicitSaveKey(scope, request.type, cleaned.text), keyChars).text;
  const observedAt = request.observedAt ?? defaults.now;
  // A user's own item holding contact details is private to them (core/contacts.ts); a household item is for the
  // household, whatever the default level.
  const privacy =
    kind === "household"
      ? "household"
      : cleaned.contactsKept > 0
        ? privacyWithContacts(defaults.privacy)
        : defaults.privacy;
  const object: KnowledgeObject = {
    id: knowledgeIdFor(key),
    statement: cleaned.text,
    type: request.type,
    provenance: {
      key,
      source: "user",
      ...(request.sessionId !== undefined && { sessionId: request.sessionId }),
      agentId: request.principal.agentId,
      ...(channel !== undefined && { channel: withinBound(channel.text, channelChars) }),
      sourceTurnIds: request.turnId === undefined ? [] : [request.turnId],
      observedAt,
      ingestedAt: defaults.now,
    },
    scope: kind,
    owner: kind === "user" ? { userId: scope.ownerIds[0] } : { householdId: scope.ownerIds[0] },
    privacy,
    consent: { retrieval: true, agents: ["*"] },
    dimensions: {},
    confidence: explicitSaveConfidence,
    reinforcementCount: 1,
    toolConfirmations: 0,
    sessionIds: request.sessionId === undefined ? [] : [request.sessionId],
    lastReinforcedAt: observedAt,
    lastDecayedAt: null,
    userDirective: true,
    usageCount: 0,
    lastUsedAt: null,
    validity: { validFrom: observedAt, invalidAt: null },
    links: [],
    promotionState: "none",
    status: "active",
    createdAt: defaults.now,
    updatedAt: defaults.now,
  };
  return { object, redactions: cleaned.total + (channel?.total ?? 0) };
}

export type RepeatOutcome =
  | { status: "replayed" }
  | { status: "reinforced" | "revived"; object: KnowledgeObject };

/**
 * A save whose object exists. The same turn again (a retried delivery) changes nothing. From another turn it is
 * the person asserting it again: reinforced (a new session counts more), never below the save's confidence, and
 * revived when it had been demoted or invalidated since — the person's word now outranks the older evidence.
 */
export function planRepeatSave(
  existing: KnowledgeObject,
  request: Pick<ExplicitSaveRequest, "sessionId" | "turnId" | "observedAt">,
  now: string,
): RepeatOutcome {
  const live = isLive({
    state: existing.status,
    invalidAt: existing.validity.invalidAt ?? undefined,
  });
  const sameTurn =
    request.turnId !== undefined
      ? existing.provenance.sourceTurnIds.includes(request.turnId)
      : request.sessionId === undefined || existing.sessionIds.includes(request.sessionId);
  if (live && existing.userDirective && sameTurn) return { status: "replayed" };
  const newSession = request.sessionId !== undefined && !existing.sessionIds.includes(request.sessionId);
  const reinforced = sameTurn
    ? existing.confidence
    : applyConfidenceEvent(existing.confidence, { kind: "reinforcement", newSession });
  const observedAt = request.observedAt ?? now;
  const object: KnowledgeObject = {
    ...existing,
    confidence: Math.max(reinforced, explicitSaveConfidence),
    reinforcementCount: existing.reinforcementCount + (sameTurn ? 0 : 1),
    sessionIds:
      request.sessionId === undefined
        ? existing.sessionIds
        : sortedUnion(existing.sessionIds, [request.sessionId]).slice(-256),
    provenance: {
      ...existing.provenance,
      sourceTurnIds:
        request.turnId === undefined
          ? existing.provenance.sourceTurnIds
          : sortedUnion(existing.provenance.sourceTurnIds, [request.turnId]).slice(-64),
    },
    lastReinforcedAt:
      Date.parse(observedAt) > Date.parse(existing.lastReinforcedAt) ? observedAt : existing.lastReinforcedAt,
    userDirective: true,
    status: "active",
    validity: { ...existing.validity, invalidAt: null },
    updatedAt: now,
  };
  return { status: live ? "reinforced" : "revived", object };
}

/**
 * The page a saved object lands on: the artifact of its scope and type, rendered from every object of that scope
 * and type that qualifies (core/proposal.ts, the same rule and bytes dream uses, so dream regenerating it finds the
 * same proposal id). Undefined when the current file already lists exactly the qualifying objects.
 */
export function draftPageProposal(
  objects: readonly MaturingObject[],
  saved: MaturingObject,
  current: string | undefined,
  artifactsDir: string,
): { path: string; draft: ProposalDraft | undefined } {
  const path = artifactPath(artifactsDir, saved.scope, saved.type);
  const members = [
    ...objects.filter(
      (o) =>
        o.id !== saved.id && o.type === saved.type && artifactPath(artifactsDir, o.scope, o.type) === path,
    ),
    saved,
  ].sort((a, b) => (a.id < b.id ? -1 : 1));
  const files = current === undefined ? new Map<string, string>() : new Map([[path, current]]);
  const [draft] = generateProposals(members, files, { artifactsDir, maxProposals: 1 });
  return { path, draft: draft?.artifactPath === path ? draft : undefined };
}
