/**
 * Who a Kubernetes identity is in the household: pure rules. `kubectl remram user add` gives each member a
 * ServiceAccount named `<appliance>-member-<memberId>` in the appliance's namespace; a token of that account is the
 * member's credential. Nothing else maps to a member: not a user name, not a group, not another namespace's account.
 */

export function memberServiceAccountName(appliance: string, memberId: string): string {
  return `${appliance}-member-${memberId}`;
}

const serviceAccountUser = /^system:serviceaccount:([^:]+):([^:]+)$/;

export interface Household {
  namespace: string;
  appliance: string;
  memberIds: readonly string[];
}

/** The member id `username` (as the API server reports it for a token) stands for, or why it stands for none. */
export function memberOf(username: string, household: Household): { memberId: string } | { refusal: string } {
  const match = serviceAccountUser.exec(username);
  const prefix = memberServiceAccountName(household.appliance, "");
  const notMember = `${username} is not a member's credential for appliance ${household.appliance}`;
  if (match === null)
    return { refusal: `${notMember}: sign in with the token kubectl remram user add gave you` };
  const [, namespace, account] = match as unknown as [string, string, string];
  if (namespace !== household.namespace || !account.startsWith(prefix))
    return { refusal: `${notMember}: sign in with the token kubectl remram user add gave you` };
  const memberId = account.slice(prefix.length);
  if (!household.memberIds.includes(memberId))
    return {
      refusal: `${memberId} is no longer a member of the household of appliance ${household.appliance} (spec.household.members)`,
    };
  return { memberId };
}
