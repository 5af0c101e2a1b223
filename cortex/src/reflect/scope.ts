import type { ReflectionDelta } from "@remram/contract";
import type { MaturingObject, Principal, Scope, ScopeKind } from "../core/knowledge.js";

/**
 * Scope rules for reflection writes. The principal comes from the gateway session; a delta is model output,
 * so every scope it names and every object it points at is checked against the principal before anything is
 * written. One violation rejects the whole delta: a partly applied reflection would be harder to audit.
 */

export interface ScopeViolation {
  /** Where in the delta, e.g. "items.2.scope" or "corrections.0.targetId". */
  path: string;
  reason: string;
}

/** Whether `principal` may write knowledge into `scope`, given the scopes the DimensionPolicy allows. */
export function canWriteScope(
  principal: Principal,
  scope: Scope,
  allowedScopes: readonly ScopeKind[],
): boolean {
  if (!allowedScopes.includes(scope.kind)) return false;
  switch (scope.kind) {
    case "user":
      return scope.ownerIds.length === 1 && scope.ownerIds[0] === principal.userId;
    case "household":
      return (
        principal.householdId !== undefined &&
        scope.ownerIds.length === 1 &&
        scope.ownerIds[0] === principal.householdId
      );
    case "shared":
      // Everyone on the appliance reads shared knowledge, so no session writes it: it comes from dream and from
      // promotions an approver allowed.
      return false;
  }
}

function scopeViolation(
  path: string,
  principal: Principal,
  scope: Scope,
  allowedScopes: readonly ScopeKind[],
): ScopeViolation[] {
  if (canWriteScope(principal, scope, allowedScopes)) return [];
  const reason =
    scope.kind === "shared"
      ? "shared scope is written only by dream and approved promotions, never by a session"
      : allowedScopes.includes(scope.kind)
        ? `principal ${principal.userId} does not own ${scope.kind} scope [${scope.ownerIds.join(", ")}]`
        : `scope ${scope.kind} is not allowed by the dimension policy`;
  return [{ path, reason }];
}

/**
 * Every scope violation in a delta. `targets` are the stored objects the delta names by id (corrections,
 * confidence adjustments and link ends); an id that is missing or outside the principal's scope is a violation too, and the
 * answer does not say which of the two it was, so ids in other scopes cannot be probed.
 */
export function findScopeViolations(
  delta: ReflectionDelta,
  principal: Principal,
  targets: ReadonlyMap<string, Pick<MaturingObject, "scope">>,
  allowedScopes: readonly ScopeKind[],
): ScopeViolation[] {
  const targetViolation = (path: string, targetId: string): ScopeViolation[] => {
    const target = targets.get(targetId);
    if (target !== undefined && canWriteScope(principal, target.scope, allowedScopes)) return [];
    return [{ path, reason: `no object ${targetId} in the principal's scope` }];
  };
  return [
    ...delta.items.flatMap((item, i) =>
      scopeViolation(`items.${i}.scope`, principal, item.scope, allowedScopes),
    ),
    ...delta.corrections.flatMap((correction, i) => [
      ...scopeViolation(`corrections.${i}.scope`, principal, correction.scope, allowedScopes),
      ...(correction.targetId === undefined
        ? []
        : targetViolation(`corrections.${i}.targetId`, correction.targetId)),
      ...(correction.replacement === undefined
        ? []
        : scopeViolation(
            `corrections.${i}.replacement.scope`,
            principal,
            correction.replacement.scope,
            allowedScopes,
          )),
    ]),
    ...delta.confidenceAdjustments.flatMap((adjustment, i) =>
      targetViolation(`confidenceAdjustments.${i}.targetId`, adjustment.targetId),
    ),
    // A link writes its reverse onto the stored end, so that end must be the principal's to write, like a target.
    ...delta.links.flatMap((link, i) =>
      (["from", "to"] as const).flatMap((side) => {
        const end = link[side];
        return "id" in end ? targetViolation(`links.${i}.${side}.id`, end.id) : [];
      }),
    ),
  ];
}
