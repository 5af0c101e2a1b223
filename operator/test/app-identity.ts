/**
 * remram-app's own identity for suites that run the app in-process: the ServiceAccount, Role and RoleBinding the
 * operator gives it (the builder's own rule: get on its RemramAppliance, nothing else), made here where no operator
 * made them, and a TokenRequest token of that account, as the pod's mounted token would be.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { waitFor } from "../../test/harness/src/wait.js";
import { appName, appRoleRules } from "../src/appliance/children/app.js";
import { KubeClient, type KubeObject } from "../src/runtime/kube-client.js";

export async function appIdentity(
  admin: KubeClient,
  adminConfig: KubeConfig,
  namespace: string,
  appliance: string,
): Promise<KubeConfig> {
  const name = appName(appliance);
  const accounts = `/api/v1/namespaces/${namespace}/serviceaccounts`;
  const rbac = `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}`;
  // Made here unless there already (an operator reconciling the appliance makes the same three).
  const ensure = async (path: string, object: KubeObject & Record<string, unknown>) => {
    if ((await admin.get(`${path}/${object.metadata.name}`)) === undefined) await admin.create(path, object);
  };
  await ensure(accounts, { apiVersion: "v1", kind: "ServiceAccount", metadata: { name, namespace } });
  await ensure(`${rbac}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name, namespace },
    rules: appRoleRules(appliance),
  });
  await ensure(`${rbac}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name, namespace }],
  });
  const issued = await admin.create<{ status: { token: string } }>(`${accounts}/${name}/token`, {
    apiVersion: "authentication.k8s.io/v1",
    kind: "TokenRequest",
    spec: { expirationSeconds: 3600 },
  });
  const cluster = adminConfig.getCurrentCluster();
  if (cluster === null) throw new Error("the admin kubeconfig has no cluster");
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name, token: issued.status.token }],
    contexts: [{ name, cluster: cluster.name, user: name, namespace }],
    currentContext: name,
  });
  // RBAC's authorizer reads bindings from a cache: wait until the new one answers.
  const own = new KubeClient(config);
  await waitFor(
    async () =>
      (await own
        .get(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/${appliance}`)
        .catch(() => undefined))
        ? true
        : undefined,
    { what: "the app's identity may get its appliance", timeoutMs: 10_000, intervalMs: 200 },
  );
  return config;
}
