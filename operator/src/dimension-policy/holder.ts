/**
 * Which DimensionPolicy an appliance's Cortex takes. Cortex holds one policy per appliance, and admission ties a
 * policy's name to its appliance, so normally there is one. Objects made before that rule can still be two for
 * one appliance; then exactly one (the same for every reconcile) is applied and the others are refused.
 */
import { dimensionPolicySpec } from "../api/v1alpha1/dimension-policy.js";
import type { KubeObject } from "../runtime/kube-client.js";
import { objectKey } from "../runtime/owner.js";

export const dimensionFinalizer = "remram.io/deregister-dimensions";

interface PolicyLike extends KubeObject {
  spec?: unknown;
}

function applianceOf(policy: PolicyLike): string | undefined {
  const parsed = dimensionPolicySpec.safeParse(policy.spec ?? {});
  return parsed.success ? parsed.data.applianceRef.name : undefined;
}

/**
 * The policy in force for `appliance` among one namespace's policies: the one named after it, else the oldest
 * (then by name). One being deleted keeps the appliance until its finalizer has reset Cortex, so a successor never
 * applies its policy before that reset and gets wiped by it.
 */
export function policyHolder<T extends PolicyLike>(policies: readonly T[], appliance: string): T | undefined {
  const candidates = policies.filter(
    (policy) =>
      applianceOf(policy) === appliance &&
      (policy.metadata.deletionTimestamp === undefined ||
        (policy.metadata.finalizers ?? []).includes(dimensionFinalizer)),
  );
  const rank = (policy: T): [number, string, string] => [
    policy.metadata.name === appliance ? 0 : 1,
    // RFC 3339 in UTC sorts as text; "~" puts a policy without a timestamp last.
    policy.metadata.creationTimestamp ?? "~",
    policy.metadata.name,
  ];
  const compare = (x: string, y: string): number => (x < y ? -1 : x > y ? 1 : 0);
  return [...candidates].sort((a, b) => {
    const [ra, rb] = [rank(a), rank(b)];
    return ra[0] - rb[0] || compare(ra[1], rb[1]) || compare(ra[2], rb[2]);
  })[0];
}

/** The keys of the other policies for the same appliance: a change to one can hand the appliance to another. */
export function siblingKeys(policy: PolicyLike, policies: readonly PolicyLike[]): string[] {
  const appliance = applianceOf(policy);
  if (appliance === undefined) return [];
  return policies
    .filter((other) => other.metadata.name !== policy.metadata.name && applianceOf(other) === appliance)
    .map((other) => objectKey(other.metadata.namespace, other.metadata.name));
}
