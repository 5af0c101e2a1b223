/**
 * The test bed's side of kubectl-remram's integration suite: the CRDs, a namespace with an appliance, a schedule,
 * proposals the operator's identity created (Pending, Failed), an operator Deployment to read a version from, and
 * kubeconfigs of ServiceAccounts: an approver bound to the chart's remram-approver rules, a viewer who may only
 * read proposals, and one with no RBAC at all.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { operatorUsername } from "../../operator/src/api/approval-policy.js";
import {
  defaultOperatorNamespace,
  defaultOperatorServiceAccount,
} from "../../operator/src/api/generated-files.js";
import {
  adminClient,
  createNamespace,
  installCrds,
  untilApprovalPolicyAccepts,
} from "../../operator/test/cluster.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { repoRoot } from "../../test/harness/src/paths.js";

export const kubernetes = testbedEndpoints("kubernetes");
export const { client: admin } = adminClient();
const operatorName = operatorUsername(defaultOperatorNamespace, defaultOperatorServiceAccount);
const operator = admin.as(operatorName, ["system:serviceaccounts", "system:authenticated"]);
const rbac = "/apis/rbac.authorization.k8s.io/v1";
const at = "2026-01-01T00:00:00Z";

/** The rules of the chart's remram-approver ClusterRole, read from its template (its Helm lines left out). */
function approverRules(): unknown {
  const template = readFileSync(
    join(repoRoot, "charts/remram-operator/templates/approver-role.yaml"),
    "utf8",
  );
  const plain = template
    .split("\n")
    .filter((line) => !line.trimStart().startsWith("{{"))
    .map((line) => line.replace(/\s*\{\{.*\}\}\s*$/, ""))
    .join("\n");
  return (load(plain) as { rules: unknown }).rules;
}

const condition = (type: string, status: string, reason: string, message = "") => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: at,
});

/** A kubeconfig file for ServiceAccount `name` in `namespace` (a TokenRequest token). */
async function serviceAccountKubeconfig(namespace: string, name: string, dir: string): Promise<string> {
  const accounts = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  await admin.create(accounts, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } });
  const request = await admin.create<{ status: { token: string } }>(`${accounts}/${name}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600 },
  });
  const file = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        { name: "testbed", cluster: { server: kubernetes.server, "insecure-skip-tls-verify": true } },
      ],
      users: [{ name, user: { token: request.status.token } }],
      contexts: [{ name: "testbed", context: { cluster: "testbed", user: name, namespace } }],
      "current-context": "testbed",
    }),
    { mode: 0o600 },
  );
  return file;
}

/** A kubeconfig whose server is `server` (nothing listens there in the no-cluster case). */
export function kubeconfigFor(server: string, dir: string, name: string): string {
  const file = join(dir, `${name}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name, cluster: { server, "insecure-skip-tls-verify": true } }],
      users: [{ name, user: { token: "x" } }],
      contexts: [{ name, context: { cluster: name, user: name } }],
      "current-context": name,
    }),
  );
  return file;
}

export interface Fixtures {
  approver: string;
  viewer: string;
  nobody: string;
  approverRole: string;
}

export async function createFixtures(namespace: string, suffix: string, dir: string): Promise<Fixtures> {
  await installCrds(admin);
  await createNamespace(admin, namespace);
  const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}`;
  const role = (name: string, rules: unknown) =>
    admin.create(`${rbac}/namespaces/${namespace}/roles`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace },
      rules,
    });
  const bind = (name: string, roleRef: { kind: string; name: string }, subject: object) =>
    admin.create(`${rbac}/namespaces/${namespace}/rolebindings`, {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", ...roleRef },
      subjects: [subject],
    });
  // The chart's approver rules under a name of this run's own (another suite may install the chart's).
  const approverRole = `remram-approver-${suffix}`;
  await admin.create(`${rbac}/clusterroles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRole",
    metadata: { name: approverRole },
    rules: approverRules(),
  });
  await role("operator", [
    {
      apiGroups: ["remram.io"],
      resources: ["artifactproposals", "artifactproposals/status"],
      verbs: ["get", "create", "patch"],
    },
  ]);
  await role("viewer", [
    { apiGroups: ["remram.io"], resources: ["artifactproposals"], verbs: ["get", "list"] },
  ]);
  await bind(
    "operator",
    { kind: "Role", name: "operator" },
    { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: operatorName },
  );
  const [approver, viewer, nobody] = await Promise.all([
    serviceAccountKubeconfig(namespace, "approver", dir),
    serviceAccountKubeconfig(namespace, "viewer", dir),
    serviceAccountKubeconfig(namespace, "nobody", dir),
  ]);
  await bind(
    "approver",
    { kind: "ClusterRole", name: approverRole },
    { kind: "ServiceAccount", name: "approver", namespace },
  );
  await bind(
    "viewer",
    { kind: "Role", name: "viewer" },
    { kind: "ServiceAccount", name: "viewer", namespace },
  );

  await admin.create(`${api}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: {},
  });
  await admin.mergePatch(`${api}/remramappliances/box/status`, {
    status: {
      observedGeneration: 1,
      hardwareProfile: "cpu-only",
      conditions: [
        condition("Ready", "True", "Available"),
        condition("CortexReady", "True", "Available", "1/1 ready"),
      ],
      endpoints: { cortex: `http://box-cortex.${namespace}.svc:8080` },
    },
  });
  await admin.create(`${api}/dreamschedules`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "DreamSchedule",
    metadata: { name: "nightly", namespace },
    spec: { applianceRef: { name: "box" }, schedule: "0 3 * * *" },
  });
  const proposals: [string, "Pending" | "Failed"][] = [
    ["box-p-1", "Pending"],
    ["box-p-2", "Failed"],
    ["box-p-3", "Pending"],
  ];
  for (const [name, phase] of proposals) {
    await operator.create(`${api}/artifactproposals`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "ArtifactProposal",
      metadata: { name, namespace },
      spec: {
        applianceRef: { name: "box" },
        proposalId: name.replace("box-", ""),
        artifactPath: "notes/house.md",
        proposedDigest: `sha256:${"a".repeat(64)}`,
        diff: "+ the boiler is serviced in May",
        rationale: "repeated in three sessions",
        proposedBy: operatorName,
      },
    });
    const ready =
      phase === "Pending"
        ? condition("Ready", "False", "AwaitingApproval")
        : condition("Ready", "False", "ApprovalStale", "the spec changed after the decision");
    await untilApprovalPolicyAccepts(() =>
      operator.mergePatch(`${api}/artifactproposals/${name}/status`, {
        status: { phase, conditions: [ready] },
      }),
    );
  }
  await admin.create(`/apis/apps/v1/namespaces/${namespace}/deployments`, {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "remram-operator", namespace, labels: { "app.kubernetes.io/name": "remram-operator" } },
    spec: {
      replicas: 0,
      selector: { matchLabels: { "app.kubernetes.io/name": "remram-operator" } },
      template: {
        metadata: { labels: { "app.kubernetes.io/name": "remram-operator" } },
        spec: { containers: [{ name: "operator", image: `localhost/remram-operator:9.9.9-${suffix}` }] },
      },
    },
  });
  return { approver, viewer, nobody, approverRole };
}

export async function deleteFixtures(namespace: string, approverRole: string): Promise<void> {
  await admin.delete(`/api/v1/namespaces/${namespace}`);
  await admin.delete(`${rbac}/clusterroles/${approverRole}`);
}
