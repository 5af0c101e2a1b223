/**
 * Forgotten knowledge, pure: how a forget's tombstones name an object (its id, which ingest derives from the
 * provenance key and owner, so a replayed capture maps to it) and its statement within its owner (the same words
 * captured or reflected again under another key), as digests, so the tombstone index holds no id or text in clear;
 * and what a reflection does with an object it would create again.
 */
import { createHash } from "node:crypto";
import type { KnowledgeObject } from "@remram/contract";
import { normalizeStatement } from "./ingest-plan.js";
import type { MaturingObject } from "./knowledge.js";

const digest = (text: string): string => createHash("sha256").update(text).digest("hex");

/** Whose an object is, as forget tombstones name it; shared objects are nobody's to forget. */
export function ownerKey(scope: KnowledgeObject["scope"], ownerId: string | undefined): string | undefined {
  if (scope === "shared" || ownerId === undefined) return undefined;
  return `${scope}/${ownerId}`;
}

export function ownerKeyOf(object: Pick<KnowledgeObject, "scope" | "owner">): string | undefined {
  return ownerKey(object.scope, object.scope === "user" ? object.owner.userId : object.owner.householdId);
}

export function forgottenIdSubject(id: string): string {
  return digest(`remram-forget-object\n${id}`);
}

/** Case, spacing and final punctuation aside, as ingest's derived keys read a statement. */
export function forgottenStatementSubject(owner: string, statement: string): string {
  return digest(`remram-forget-statement\n${owner}\n${normalizeStatement(statement)}`);
}

/** The owner as a forget tombstone records it, so a retried forget can tell its own earlier work. */
export function forgottenOwnerSubject(owner: string): string {
  return digest(`remram-forget-owner\n${owner}`);
}

export interface ForgetSubject {
  subject: string;
  kind: "object" | "statement";
}

/** A forget's tombstone: a document of the `-forgotten` index, and its copy in the backup destination. */
export interface ForgottenMark extends ForgetSubject {
  forgottenAt: string;
  /** The owner's digest (forgottenOwnerSubject). */
  owner?: string | undefined;
}

/** The tombstones that refuse an object's return: its id, and its statement within its owner. */
export function forgetSubjects(
  object: Pick<KnowledgeObject, "id" | "statement" | "scope" | "owner">,
): ForgetSubject[] {
  const owner = ownerKeyOf(object);
  return [
    { subject: forgottenIdSubject(object.id), kind: "object" },
    ...(owner === undefined
      ? []
      : [{ subject: forgottenStatementSubject(owner, object.statement), kind: "statement" as const }]),
  ];
}

/** A reflected object's statement subject (the maturation view names its owner in its scope). */
export function maturingStatementSubject(
  object: Pick<MaturingObject, "scope" | "statement">,
): string | undefined {
  const owner = ownerKey(object.scope.kind, object.scope.ownerIds[0]);
  return owner === undefined ? undefined : forgottenStatementSubject(owner, object.statement);
}

/**
 * A reflection's plan without the objects it would create again after the person forgot them: those are not
 * written, and the links the plan gave other objects to them go too (they would name nothing). What else the plan
 * does (a correction's invalidation, reinforcements) stands.
 */
export function withoutForgotten(
  created: readonly MaturingObject[],
  updated: readonly MaturingObject[],
  dropped: ReadonlySet<string>,
): { created: MaturingObject[]; updated: MaturingObject[] } {
  if (dropped.size === 0) return { created: [...created], updated: [...updated] };
  const unlinked = (object: MaturingObject): MaturingObject => {
    const links = object.links.filter((l) => !dropped.has(l.targetId));
    return links.length === object.links.length ? object : { ...object, links };
  };
  return {
    created: created.filter((o) => !dropped.has(o.id)).map(unlinked),
    updated: updated.map(unlinked),
  };
}

/** The 410 message of an ingest that would bring forgotten knowledge back. */
export function forgottenRefusal(where: readonly string[], forgottenAt: string): string {
  return `${where.join(", ")}: knowledge the person asked to forget (at ${forgottenAt}); refused for good, do not retry`;
}

/** The tombstones a forget of these objects records. */
export function forgottenMarks(
  objects: readonly Pick<KnowledgeObject, "id" | "statement" | "scope" | "owner">[],
  forgottenAt: string,
): ForgottenMark[] {
  return objects.flatMap((object) => {
    const owner = ownerKeyOf(object);
    return forgetSubjects(object).map(({ subject, kind }) => ({
      subject,
      kind,
      forgottenAt,
      ...(owner !== undefined && { owner: forgottenOwnerSubject(owner) }),
    }));
  });
}
