/** What `kubectl remram user list` prints: each household member's ServiceAccount and bindings. Pure. */
import {
  type Grant,
  grantBindingName,
  grantRoles,
  grants,
  type LabeledObject,
  memberAccountName,
  memberLabel,
  type RoleBindingView,
} from "./users.js";

export interface MemberRow {
  member: string;
  /** In spec.household.members (an account can outlive the member's entry). */
  inHousehold: boolean;
  account?: string;
  grants: Grant[];
}

/** One row per household member, then accounts of ids no longer in the household. */
export function memberRows(
  appliance: string,
  members: readonly string[],
  accounts: readonly LabeledObject[],
  bindings: readonly RoleBindingView[],
): MemberRow[] {
  const accountOf = new Map<string, string>();
  for (const account of accounts) {
    const member = account.metadata.labels?.[memberLabel];
    if (member !== undefined && account.metadata.name === memberAccountName(appliance, member))
      accountOf.set(member, account.metadata.name);
  }
  const ids = [...members, ...[...accountOf.keys()].filter((id) => !members.includes(id)).sort()];
  return ids.map((member) => {
    const account = accountOf.get(member);
    const held = grants.filter((grant) =>
      bindings.some(
        (binding) =>
          binding.metadata.name === grantBindingName(memberAccountName(appliance, member), grant) &&
          binding.roleRef.name === grantRoles[grant] &&
          binding.metadata.labels?.[memberLabel] === member,
      ),
    );
    return { member, inHousehold: members.includes(member), ...(account ? { account } : {}), grants: held };
  });
}

export function formatUserList(appliance: string, namespace: string, rows: readonly MemberRow[]): string {
  if (rows.length === 0) return `RemramAppliance ${appliance} in ${namespace} has no spec.household.members`;
  const table = [
    ["MEMBER", "SERVICEACCOUNT", "BINDINGS"],
    ...rows.map((row) => [
      row.member,
      row.account ?? "-",
      (row.grants.length === 0 ? "-" : row.grants.join(",")) +
        (row.inHousehold ? "" : `  (not in spec.household: kubectl remram user remove ${row.member})`),
    ]),
  ];
  const widths = [0, 1].map((column) => Math.max(...table.map((cells) => (cells[column] ?? "").length)));
  return table
    .map((cells) =>
      cells
        .map((cell, column) => (column < 2 ? cell.padEnd(widths[column] ?? 0) : cell))
        .join("  ")
        .trimEnd(),
    )
    .join("\n");
}
