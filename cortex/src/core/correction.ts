/**
 * A person's correction of one knowledge object through the app, pure. The old object is never overwritten: it is
 * invalidated (validity ended, confidence lowered as for any contradiction, linked `supersededBy` the new one) and
 * stays listed for the history, and a new active object states the correction with the person's trust (provenance
 * `user`, `userDirective`, an explicit save's confidence), in the old one's type, scope, owner, privacy, consent and
 * dimensions, linked `supersedes` the old one. The new id is derived from the old id and the corrected statement,
 * so a retried correction finds what it did instead of making a second object.
 */
import type { KnowledgeObject } from "@remram/contract";
import { applyConfidenceEvent, userDirectiveConfidence } from "./confidence.js";
import { contactHandlingFor, privacyWithContacts } from "./contacts.js";
import { knowledgeIdFor, normalizeStatement, sha256 } from "./ingest-plan.js";
import { redact, withinBound } from "./redaction.js";

/** Where a correction came from, as its provenance's channel says. */
export const correctionChannel = "remram-app";

const statementChars = 4000;
const maxLinks = 64;

/** The correction's idempotency key: the corrected object and what it now says (case and spacing aside). */
export function correctionKey(oldId: string, redactedStatement: string): string {
  return `correction:${oldId}:${sha256(normalizeStatement(redactedStatement))}`;
}

export type CorrectionPlan =
  /** Invalidate `invalidated` (conditional on the version read) and create `created`. */
  | { kind: "apply"; invalidated: KnowledgeObject; created: KnowledgeObject; redactions: number }
  /** The same correction was made before: answer with `created` (stored, or to be stored if a crash cut it short). */
  | { kind: "replay"; created: KnowledgeObject }
  /** Not active any more (corrected otherwise, invalidated, demoted, expired): 409. */
  | { kind: "inactive"; status: KnowledgeObject["status"] }
  /** The correction says what the object says already: 400. */
  | { kind: "unchanged" };

/** Active and not past its validity: what a person can still correct. */
export function isCorrectable(object: KnowledgeObject, now: string): boolean {
  const { invalidAt } = object.validity;
  return object.status === "active" && (invalidAt === null || Date.parse(invalidAt) > Date.parse(now));
}

export function planCorrection(old: KnowledgeObject, statement: string, now: string): CorrectionPlan {
  // Redacted like every write; contact details stay only in a user's own item, which then becomes private.
  const cleaned = redact(statement, { contacts: contactHandlingFor(old.scope) });
  const text = withinBound(cleaned.text, statementChars);
  const key = correctionKey(old.id, text);
  const id = knowledgeIdFor(key);
  const created: KnowledgeObject = {
    id,
    statement: text,
    type: old.type,
    // No claim: the old one described the old statement, and dream would compare a stale one.
    provenance: {
      key,
      source: "user",
      channel: correctionChannel,
      sourceTurnIds: [],
      observedAt: now,
      ingestedAt: now,
    },
    scope: old.scope,
    owner: old.owner,
    privacy: cleaned.contactsKept > 0 ? privacyWithContacts(old.privacy) : old.privacy,
    consent: old.consent,
    dimensions: old.dimensions,
    confidence: userDirectiveConfidence,
    reinforcementCount: 1,
    toolConfirmations: 0,
    sessionIds: [],
    lastReinforcedAt: now,
    lastDecayedAt: null,
    userDirective: true,
    usageCount: 0,
    lastUsedAt: null,
    validity: { validFrom: now, invalidAt: null },
    links: [{ rel: "supersedes", targetId: old.id }],
    promotionState: "none",
    status: "active",
    createdAt: now,
    updatedAt: now,
  };
  const supersededByThis = old.links.some((l) => l.rel === "supersededBy" && l.targetId === id);
  if (old.status === "invalidated" && supersededByThis) return { kind: "replay", created };
  if (!isCorrectable(old, now)) return { kind: "inactive", status: old.status };
  if (normalizeStatement(text) === normalizeStatement(old.statement)) return { kind: "unchanged" };
  const invalidated: KnowledgeObject = {
    ...old,
    status: "invalidated",
    validity: { ...old.validity, invalidAt: now },
    confidence: applyConfidenceEvent(old.confidence, { kind: "contradiction" }),
    // First, so the bound on links never drops it: a retry recognises its correction by this link.
    links: [
      { rel: "supersededBy" as const, targetId: id },
      ...old.links.filter((l) => !(l.rel === "supersededBy" && l.targetId === id)),
    ].slice(0, maxLinks),
    updatedAt: now,
  };
  return { kind: "apply", invalidated, created, redactions: cleaned.total };
}
