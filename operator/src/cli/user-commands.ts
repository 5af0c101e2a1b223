/**
 * `kubectl remram user add|list|remove`: the I/O of per-person credentials. The ServiceAccount and its bindings
 * are created with the caller's own identity, so RBAC decides who may hand out which role; the token comes from
 * the TokenRequest API (bound to the account's uid, so deleting the account revokes every token issued for it).
 */
import { readFileSync } from "node:fs";
import { KubeApiError } from "../runtime/kube-client.js";
import { type Access, applianceName, type Cluster, mayI, readNamed, whoAmI } from "./cluster.js";
import { CliError, grantHint } from "./errors.js";
import { formatUserList, memberRows } from "./user-list.js";
import {
  bindingIsCurrent,
  type ClusterView,
  escalationMessage,
  formatAddNotice,
  formatMissing,
  type Grant,
  grantBindingName,
  grantRoles,
  grants,
  isEscalationRefusal,
  isMembersObject,
  type LabeledObject,
  memberAccountName,
  memberKubeconfig,
  memberRoleBinding,
  memberSelector,
  memberServiceAccount,
  notAMember,
  planBindings,
  type RoleBindingView,
  type UserCommand,
  wantedGrants,
} from "./users.js";

/** What a user command prints: `text` on stdout, `notice` on stderr. */
export interface UserOutcome {
  text: string;
  notice?: string;
}

const rbacPath = (namespace: string) =>
  `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`;
const accountsPath = (namespace: string) => `/api/v1/namespaces/${namespace}/serviceaccounts`;

/** spec.household.members[].id of the appliance, read as stored (no parse: a newer spec must not stop this). */
async function householdMembers(cluster: Cluster, appliance: string): Promise<string[]> {
  const object = await readNamed<{ spec?: { household?: { members?: { id?: unknown }[] } } }>(
    cluster,
    "remramappliances",
    appliance,
  );
  return (object.spec?.household?.members ?? [])
    .map((member) => member.id)
    .filter((id): id is string => typeof id === "string");
}

/** Ask first, so a missing right is named before anything changes rather than half-way through. */
async function requireAccess(
  command: UserCommand,
  cluster: Cluster,
  needed: Omit<Access, "namespace">[],
): Promise<void> {
  const answers = await Promise.all(
    needed.map((access) => mayI(cluster.client, { ...access, namespace: cluster.namespace })),
  );
  const missing = needed.filter((_, index) => answers[index] === false);
  if (missing.length === 0) return;
  const user = await whoAmI(cluster.client);
  throw new CliError(
    `forbidden: ${user} may not ${formatMissing(missing)} in namespace ${cluster.namespace}.\n${grantHint(command, cluster.namespace, user)}`,
  );
}

const core = (verb: string, resource: string, subresource?: string): Omit<Access, "namespace"> => ({
  verb,
  group: "",
  resource,
  ...(subresource ? { subresource } : {}),
});
const rbac = (verb: string): Omit<Access, "namespace"> => ({
  verb,
  group: "rbac.authorization.k8s.io",
  resource: "rolebindings",
});

/** The caller's cluster for the member's kubeconfig, its CA inlined so the file works anywhere. */
function callerCluster(cluster: Cluster): ClusterView {
  const current = cluster.kubeConfig.getCurrentCluster();
  if (current === null) throw new CliError(`context "${cluster.contextName}" names no cluster`);
  let caData = current.caData;
  if (caData === undefined && current.caFile !== undefined) {
    try {
      caData = readFileSync(current.caFile).toString("base64");
    } catch (error) {
      throw new CliError(
        `cannot read the cluster's CA ${current.caFile}: ${error instanceof Error ? error.message : String(error)}`,
      );
    }
  }
  return {
    name: current.name,
    server: current.server,
    ...(caData !== undefined ? { caData } : {}),
    ...(current.skipTLSVerify ? { skipTLSVerify: true } : {}),
    ...(current.tlsServerName !== undefined ? { tlsServerName: current.tlsServerName } : {}),
  };
}

/** Refuse, rather than adopt or delete, an object of the member's name that kubectl remram did not make. */
function refuseForeign(kind: string, object: LabeledObject, namespace: string): never {
  throw new CliError(
    `${kind}/${object.metadata.name} in namespace ${namespace} exists but was not made by kubectl remram for this member (its labels differ); rename or delete it first`,
  );
}

async function addUser(
  command: Extract<UserCommand, { action: "add" }>,
  cluster: Cluster,
): Promise<UserOutcome> {
  const { client, namespace } = cluster;
  const appliance = await applianceName(cluster, command.appliance);
  const members = await householdMembers(cluster, appliance);
  if (!members.includes(command.member)) throw new CliError(notAMember(command.member, appliance, members));
  await requireAccess(command, cluster, [
    core("get", "serviceaccounts"),
    core("create", "serviceaccounts"),
    core("create", "serviceaccounts", "token"),
    rbac("get"),
    rbac("create"),
    rbac("delete"),
  ]);
  const account = memberAccountName(appliance, command.member);
  let existing = await client.get<LabeledObject>(`${accountsPath(namespace)}/${account}`);
  if (existing !== undefined && !isMembersObject(existing, appliance, command.member))
    refuseForeign("serviceaccount", existing, namespace);
  const accountCreated = existing === undefined;
  existing ??= await client.create<LabeledObject>(
    accountsPath(namespace),
    memberServiceAccount(namespace, appliance, command.member),
  );
  const uid = existing.metadata.uid ?? "";

  const wanted = wantedGrants(command);
  const found: Partial<Record<Grant, boolean>> = {};
  for (const grant of grants) {
    const binding = await client.get<RoleBindingView>(
      `${rbacPath(namespace)}/${grantBindingName(account, grant)}`,
    );
    if (binding === undefined) continue;
    if (!isMembersObject(binding, appliance, command.member))
      refuseForeign("rolebinding", binding, namespace);
    found[grant] = bindingIsCurrent(
      binding,
      memberRoleBinding(namespace, appliance, command.member, grant, uid),
    );
  }
  const plan = planBindings(found, wanted);
  for (const grant of grants) {
    const step = plan[grant];
    if (step === undefined || step === "keep") continue;
    const path = `${rbacPath(namespace)}/${grantBindingName(account, grant)}`;
    if (step === "delete" || step === "replace") await client.delete(path);
    if (step === "create" || step === "replace")
      await createBinding(
        command,
        cluster,
        grant,
        memberRoleBinding(namespace, appliance, command.member, grant, uid),
      );
  }

  // The kubeconfig's cluster before the token: a CA that cannot be read should not cost a token.
  const kubeconfigCluster = command.output === "kubeconfig" ? callerCluster(cluster) : undefined;
  const issued = await client.create<{ status?: { token?: string; expirationTimestamp?: string } }>(
    `${accountsPath(namespace)}/${account}/token`,
    {
      apiVersion: "authentication.k8s.io/v1",
      kind: "TokenRequest",
      // No audiences: the API server's own, so the token works against it (and TokenReview accepts it).
      spec: { expirationSeconds: command.durationSeconds },
    },
  );
  const token = issued.status?.token;
  if (!token) throw new CliError(`the API server issued no token for serviceaccount/${account}`);
  const notice = formatAddNotice({
    namespace,
    member: command.member,
    account,
    accountCreated,
    plan,
    durationSeconds: command.durationSeconds,
    ...(issued.status?.expirationTimestamp ? { expiresAt: issued.status.expirationTimestamp } : {}),
  });
  return {
    text:
      kubeconfigCluster === undefined
        ? token
        : memberKubeconfig(kubeconfigCluster, namespace, account, token),
    notice,
  };
}

/** Create one binding; a refusal for escalation says which role and why, not the API server's rule dump. */
async function createBinding(
  command: UserCommand,
  cluster: Cluster,
  grant: Grant,
  binding: ReturnType<typeof memberRoleBinding>,
): Promise<void> {
  const role = await cluster.client
    .get(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${grantRoles[grant]}`)
    .catch(() => true); // Most household admins may not read ClusterRoles: then only the binding can tell.
  if (role === undefined)
    throw new CliError(
      `the ClusterRole ${grantRoles[grant]} does not exist: the remram-operator chart creates it (values ${grant === "approver" ? "approverRole.create" : "householdRoles.create"}: true)`,
    );
  try {
    await cluster.client.create(rbacPath(cluster.namespace), binding);
  } catch (error) {
    if (error instanceof KubeApiError && error.status === 403 && isEscalationRefusal(error.message)) {
      const user = await whoAmI(cluster.client);
      throw new CliError(
        `${escalationMessage(user, grant, cluster.namespace)}\n${grantHint(command, cluster.namespace, user)}`,
      );
    }
    throw error;
  }
}

async function listUsers(
  command: Extract<UserCommand, { action: "list" }>,
  cluster: Cluster,
): Promise<UserOutcome> {
  const { client, namespace } = cluster;
  const appliance = await applianceName(cluster, command.appliance);
  const members = await householdMembers(cluster, appliance);
  const query = { query: { labelSelector: memberSelector(appliance) } };
  const [accounts, bindings] = await Promise.all([
    client.send<{ items: LabeledObject[] }>("GET", accountsPath(namespace), query),
    client.send<{ items: RoleBindingView[] }>("GET", rbacPath(namespace), query),
  ]);
  return {
    text: formatUserList(
      appliance,
      namespace,
      memberRows(appliance, members, accounts.items, bindings.items),
    ),
  };
}

async function removeUser(
  command: Extract<UserCommand, { action: "remove" }>,
  cluster: Cluster,
): Promise<UserOutcome> {
  const { client, namespace } = cluster;
  // A named appliance need not exist any more: its members' accounts should still go.
  const appliance = command.appliance ?? (await applianceName(cluster, undefined));
  await requireAccess(command, cluster, [
    core("get", "serviceaccounts"),
    core("delete", "serviceaccounts"),
    rbac("get"),
    rbac("delete"),
  ]);
  const account = memberAccountName(appliance, command.member);
  const accountPath = `${accountsPath(namespace)}/${account}`;
  const existing = await client.get<LabeledObject>(accountPath);
  if (existing !== undefined && !isMembersObject(existing, appliance, command.member))
    refuseForeign("serviceaccount", existing, namespace);
  const lines: string[] = [];
  for (const grant of grants) {
    const path = `${rbacPath(namespace)}/${grantBindingName(account, grant)}`;
    const binding = await client.get<RoleBindingView>(path);
    if (binding === undefined) continue;
    if (!isMembersObject(binding, appliance, command.member))
      refuseForeign("rolebinding", binding, namespace);
    await client.delete(path);
    lines.push(`rolebinding/${binding.metadata.name} deleted`);
  }
  if (existing !== undefined) {
    await client.delete(accountPath);
    lines.push(`serviceaccount/${account} deleted: every token issued for ${command.member} stops working`);
  }
  if (lines.length === 0)
    lines.push(
      `${command.member} has no credential for ${appliance} in namespace ${namespace}; nothing to delete`,
    );
  return { text: lines.join("\n") };
}

export function manageUsers(command: UserCommand, cluster: Cluster): Promise<UserOutcome> {
  switch (command.action) {
    case "add":
      return addUser(command, cluster);
    case "list":
      return listUsers(command, cluster);
    case "remove":
      return removeUser(command, cluster);
  }
}
