/**
 * The pure half of `kubectl remram user`: per-person credentials for a household (a ServiceAccount per member,
 * RoleBindings to the chart's member, approver and household-admin ClusterRoles, TokenRequest tokens). remram-app
 * relies on the names and labels here: it maps `system:serviceaccount:<namespace>:<appliance>-member-<id>` to the
 * member. user-commands.ts does the I/O.
 */
import { dump } from "js-yaml";
import { UsageError } from "./usage-error.js";

export const userActions = ["add", "list", "remove"] as const;
export type UserAction = (typeof userActions)[number];

export const tokenOutputs = ["token", "kubeconfig"] as const;
export type TokenOutput = (typeof tokenOutputs)[number];

export type UserCommand =
  | {
      verb: "user";
      action: "add";
      member: string;
      appliance?: string;
      approver: boolean;
      admin: boolean;
      durationSeconds: number;
      output: TokenOutput;
    }
  | { verb: "user"; action: "list"; appliance?: string }
  | { verb: "user"; action: "remove"; member: string; appliance?: string };

/** The flags parseArgs hands a `user` command. */
export interface UserFlags {
  appliance?: string;
  output?: string;
  approver?: boolean;
  admin?: boolean;
  duration?: string;
}

/** What `kubectl create token` issues by default is an hour; a person's sign-in should last a month. */
export const defaultDurationSeconds = 30 * 24 * 3600;
/**
 * The API server refuses a TokenRequest under 10 minutes. A person's credential lives a year at most: one lost with
 * a phone should not outlast the household's memory of who had it (user remove revokes it sooner).
 */
const minimumSeconds = 600;
const maximumSeconds = 366 * 86_400;

const unitSeconds: Record<string, number> = { d: 86_400, h: 3_600, m: 60, s: 1 };

/** `720h`, `30d`, `1h30m` (Go's durations, as kubectl's --duration, plus days) in whole seconds. */
export function parseDuration(text: string): number {
  if (!/^(?:\d+(?:\.\d+)?[dhms])+$/.test(text))
    throw new UsageError(`--duration takes a duration such as 720h, 30d or 1h30m; got "${text}"`, "user");
  let seconds = 0;
  for (const [, amount, unit] of text.matchAll(/(\d+(?:\.\d+)?)([dhms])/g))
    seconds += Number(amount) * (unitSeconds[unit as string] ?? 0);
  seconds = Math.round(seconds);
  if (seconds < minimumSeconds)
    throw new UsageError(`--duration must be at least 10m: the API server refuses shorter tokens`, "user");
  if (seconds > maximumSeconds)
    throw new UsageError(
      `--duration must be at most 366d: a person's credential lives a year at most`,
      "user",
    );
  return seconds;
}

/** A duration as the person reads it back: `30d`, `36h`, `90m`. */
export function formatDuration(seconds: number): string {
  if (seconds % 86_400 === 0) return `${seconds / 86_400}d`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600}h`;
  if (seconds % 60 === 0) return `${seconds / 60}m`;
  return `${seconds}s`;
}

/**
 * Why `member` cannot have a credential, or undefined. The CRD admits ids with '_' or ending in '.', which no
 * ServiceAccount name can carry; those are refused here rather than by the API server's terser message.
 */
export function memberIdProblem(member: string): string | undefined {
  if (member.length > 63 || !/^[a-z][a-z0-9._-]*$/.test(member))
    return `"${member}" is not a household member id (lowercase, starting with a letter; letters, digits, '.', '_' and '-'; at most 63 characters)`;
  if (!/^[a-z]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(member))
    return `member id "${member}" cannot be part of a ServiceAccount name (letters, digits, '-' and '.', each '.' between a letter or digit on both sides, ending in a letter or digit), so it cannot have a credential`;
  return undefined;
}

/** Parse `user add|list|remove ...` (the words after `user`). */
export function userCommandOf(rest: readonly string[], values: UserFlags): UserCommand {
  const [action, ...args] = rest;
  if (action === undefined) throw new UsageError(`user needs what to do: ${userActions.join(", ")}`, "user");
  if (!(userActions as readonly string[]).includes(action))
    throw new UsageError(`user takes ${userActions.join(", ")}; got ${action}`, "user");
  if (action !== "add")
    for (const flag of ["approver", "admin", "duration", "output"] as const)
      if (values[flag] !== undefined) throw new UsageError(`--${flag} applies to user add only`, "user");
  if (values.appliance === "") throw new UsageError("--appliance needs a value", "user");
  const appliance = values.appliance !== undefined ? { appliance: values.appliance } : {};
  if (action === "list") {
    if (args.length > 0) throw new UsageError(`user list takes no arguments; got ${args.join(" ")}`, "user");
    return { verb: "user", action, ...appliance };
  }
  const [member, ...extra] = args;
  if (member === undefined)
    throw new UsageError(`user ${action} needs the member id (spec.household.members[].id)`, "user");
  if (extra.length > 0)
    throw new UsageError(`user ${action} takes one member id; got ${args.join(" ")}`, "user");
  const problem = memberIdProblem(member);
  if (problem !== undefined) throw new UsageError(problem, "user");
  if (action === "remove") return { verb: "user", action, member, ...appliance };
  const output = values.output ?? "token";
  if (!(tokenOutputs as readonly string[]).includes(output))
    throw new UsageError(`-o takes ${tokenOutputs.join(" or ")}, not "${output}"`, "user");
  return {
    verb: "user",
    action: "add",
    member,
    ...appliance,
    approver: values.approver === true,
    admin: values.admin === true,
    durationSeconds: values.duration === undefined ? defaultDurationSeconds : parseDuration(values.duration),
    output: output as TokenOutput,
  };
}

/** What a member's ServiceAccount may be bound to; remram-app reads approver and admin from the same roles. */
export const grants = ["member", "approver", "admin"] as const;
export type Grant = (typeof grants)[number];
export const grantRoles: Record<Grant, string> = {
  member: "remram-member",
  approver: "remram-approver",
  admin: "remram-household-admin",
};

export const managedBy = "kubectl-remram";
export const memberLabel = "remram.io/member";

export const memberAccountName = (appliance: string, member: string): string =>
  `${appliance}-member-${member}`;
export const grantBindingName = (account: string, grant: Grant): string => `${account}-${grant}`;
export const serviceAccountUsername = (namespace: string, account: string): string =>
  `system:serviceaccount:${namespace}:${account}`;

export function memberLabels(appliance: string, member: string): Record<string, string> {
  return {
    "app.kubernetes.io/instance": appliance,
    "app.kubernetes.io/managed-by": managedBy,
    [memberLabel]: member,
  };
}

/** The label selector of every member credential object of `appliance`. */
export const memberSelector = (appliance: string): string =>
  `app.kubernetes.io/instance=${appliance},app.kubernetes.io/managed-by=${managedBy}`;

export interface LabeledObject {
  metadata: { name: string; uid?: string; labels?: Record<string, string> };
}

/** Whether kubectl remram made `object` for this member: only those are kept, replaced or deleted. */
export function isMembersObject(object: LabeledObject, appliance: string, member: string): boolean {
  const labels = object.metadata.labels ?? {};
  return Object.entries(memberLabels(appliance, member)).every(([key, value]) => labels[key] === value);
}

export function memberServiceAccount(namespace: string, appliance: string, member: string) {
  return {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: {
      name: memberAccountName(appliance, member),
      namespace,
      labels: memberLabels(appliance, member),
    },
  };
}

export interface RoleBindingView extends LabeledObject {
  metadata: LabeledObject["metadata"] & { ownerReferences?: { uid: string }[] };
  roleRef: { apiGroup: string; kind: string; name: string };
  subjects?: { kind: string; name: string; namespace?: string }[];
}

/**
 * The RoleBinding of `grant` for the member's ServiceAccount, owned by it: deleting the account by hand lets the
 * garbage collector take its bindings too, so a later account of the same name does not inherit them.
 */
export function memberRoleBinding(
  namespace: string,
  appliance: string,
  member: string,
  grant: Grant,
  accountUid: string,
) {
  const account = memberAccountName(appliance, member);
  return {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: {
      name: grantBindingName(account, grant),
      namespace,
      labels: memberLabels(appliance, member),
      ownerReferences: [{ apiVersion: "v1", kind: "ServiceAccount", name: account, uid: accountUid }],
    },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: grantRoles[grant] },
    subjects: [{ kind: "ServiceAccount", name: account, namespace }],
  };
}

/** Whether an existing binding already is `wanted`: same role, only the account as subject, owned by it. */
export function bindingIsCurrent(existing: RoleBindingView, wanted: ReturnType<typeof memberRoleBinding>) {
  const [subject, ...others] = existing.subjects ?? [];
  const [wantedSubject] = wanted.subjects;
  return (
    existing.roleRef.kind === wanted.roleRef.kind &&
    existing.roleRef.name === wanted.roleRef.name &&
    others.length === 0 &&
    subject?.kind === wantedSubject?.kind &&
    subject?.name === wantedSubject?.name &&
    subject?.namespace === wantedSubject?.namespace &&
    (existing.metadata.ownerReferences ?? []).some(
      (owner) => owner.uid === wanted.metadata.ownerReferences[0]?.uid,
    )
  );
}

export const wantedGrants = (flags: { approver: boolean; admin: boolean }): Grant[] => [
  "member",
  ...(flags.approver ? (["approver"] as const) : []),
  ...(flags.admin ? (["admin"] as const) : []),
];

export type BindingStep = "create" | "replace" | "keep" | "delete";

/** What to do with each grant's binding so the bindings match the flags given; absent when nothing exists or is wanted. */
export function planBindings(
  existing: Partial<Record<Grant, boolean>>,
  wanted: readonly Grant[],
): Partial<Record<Grant, BindingStep>> {
  const plan: Partial<Record<Grant, BindingStep>> = {};
  for (const grant of grants) {
    const current = existing[grant];
    if (wanted.includes(grant)) plan[grant] = current === undefined ? "create" : current ? "keep" : "replace";
    else if (current !== undefined) plan[grant] = "delete";
  }
  return plan;
}

const grantFlag: Record<Grant, string> = { member: "", approver: "--approver", admin: "--admin" };

/** What `user add` did, on stderr beside the token on stdout (the token itself is never in it). */
export function formatAddNotice(facts: {
  namespace: string;
  member: string;
  account: string;
  accountCreated: boolean;
  plan: Partial<Record<Grant, BindingStep>>;
  expiresAt?: string;
  durationSeconds: number;
}): string {
  const { namespace, member, account } = facts;
  const lines = [
    `serviceaccount/${account} ${facts.accountCreated ? "created" : "kept"} in namespace ${namespace}: ${member} signs in as ${serviceAccountUsername(namespace, account)}`,
  ];
  for (const grant of grants) {
    const step = facts.plan[grant];
    if (step === undefined) continue;
    const binding = `rolebinding/${grantBindingName(account, grant)}`;
    const role = `ClusterRole ${grantRoles[grant]}`;
    if (step === "delete") lines.push(`${binding} deleted (${role}): ${grantFlag[grant]} was not given`);
    else
      lines.push(
        `${binding} ${step === "create" ? "created" : step === "replace" ? "replaced" : "kept"} (${role})`,
      );
  }
  lines.push(
    `a token for ${member}, valid ${facts.expiresAt === undefined ? `for ${formatDuration(facts.durationSeconds)}` : `until ${facts.expiresAt}`}; ` +
      `\`kubectl remram user remove ${member}\` revokes it and every other token of ${member}'s`,
  );
  return lines.join("\n");
}

/** `user add` for an id that is not in spec.household. */
export function notAMember(member: string, appliance: string, members: readonly string[]): string {
  const listed =
    members.length === 0 ? "it has no spec.household.members" : `its members are ${members.join(", ")}`;
  return `${member} is not a member of RemramAppliance ${appliance}: ${listed}. Add the person to spec.household.members first`;
}

/** Denied accesses, grouped per resource: `get and create on serviceaccounts, create on serviceaccounts/token`. */
export function formatMissing(
  missing: readonly { verb: string; resource: string; subresource?: string }[],
): string {
  const byResource = new Map<string, string[]>();
  for (const access of missing) {
    const resource = `${access.resource}${access.subresource ? `/${access.subresource}` : ""}`;
    byResource.set(resource, [...(byResource.get(resource) ?? []), access.verb]);
  }
  const and = (words: readonly string[]) =>
    words.length < 2 ? (words[0] ?? "") : `${words.slice(0, -1).join(", ")} and ${words.at(-1)}`;
  return [...byResource].map(([resource, verbs]) => `${and(verbs)} on ${resource}`).join(", ");
}

/** The API server's refusal of a RoleBinding to a role whose rules the caller does not hold itself. */
export function isEscalationRefusal(message: string): boolean {
  return message.includes("attempting to grant RBAC permissions not currently held");
}

export function escalationMessage(user: string, grant: Grant, namespace: string): string {
  const role = grantRoles[grant];
  return `forbidden: ${user} may not bind the ClusterRole ${role} in namespace ${namespace}: Kubernetes lets you bind only a role whose permissions you hold yourself, or one you have the bind verb on (clusterroles/${role}).`;
}

export interface ClusterView {
  name: string;
  server: string;
  /** Base64 PEM, as certificate-authority-data. */
  caData?: string;
  skipTLSVerify?: boolean;
  tlsServerName?: string;
}

/** A kubeconfig for the member: the caller's cluster (server, CA), the member's token, the namespace. */
export function memberKubeconfig(
  cluster: ClusterView,
  namespace: string,
  account: string,
  token: string,
): string {
  const document = {
    apiVersion: "v1",
    kind: "Config",
    clusters: [
      {
        name: cluster.name,
        cluster: {
          server: cluster.server,
          ...(cluster.caData ? { "certificate-authority-data": cluster.caData } : {}),
          ...(cluster.skipTLSVerify ? { "insecure-skip-tls-verify": true } : {}),
          ...(cluster.tlsServerName ? { "tls-server-name": cluster.tlsServerName } : {}),
        },
      },
    ],
    users: [{ name: account, user: { token } }],
    contexts: [{ name: account, context: { cluster: cluster.name, user: account, namespace } }],
    "current-context": account,
  };
  return dump(document, { lineWidth: -1 });
}
