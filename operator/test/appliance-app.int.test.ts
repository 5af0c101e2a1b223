// REMRAM_TESTBED=kubernetes: remram-app's objects, made by the operator (in this process) acting with exactly the
// chart's RBAC: a token of the chart's ServiceAccount, bound to the chart's rendered rules (its cluster-scoped ones
// under names of this suite's own, so no other suite's are touched). The API server refuses a Role granting what its
// maker does not hold, so this is where the app's Role (get on its own appliance) is proven makeable without
// `escalate`. Then: the app's own token reads its appliance and nothing else, a converged appliance costs no write,
// and spec.app.enabled false deletes every object of the app (and true brings them back). No pod runs.
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { loadAll } from "js-yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, repoRoot } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import type { RunningOperator } from "../src/operator.js";
import { KubeApiError, KubeClient, type KubeObject, objectPath } from "../src/runtime/kube-client.js";
import { adminClient, createNamespace, installCrds, runSuffix, startTestOperator } from "./cluster.js";

const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const { client: admin } = adminClient();
const suffix = runSuffix();
const releaseNamespace = `remram-system-app-${suffix}`;
const namespace = `app-${suffix}`;
const appliancePath = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/box`;
const rbac = "/apis/rbac.authorization.k8s.io/v1";

/** Every object of the app, by path, as the operator makes it for appliance "box". */
const appObjects = [
  `/api/v1/namespaces/${namespace}/serviceaccounts/box-app`,
  `${rbac}/namespaces/${namespace}/roles/box-app`,
  `${rbac}/namespaces/${namespace}/rolebindings/box-app`,
  `/apis/apps/v1/namespaces/${namespace}/deployments/box-app`,
  `/api/v1/namespaces/${namespace}/services/box-app`,
  `/api/v1/namespaces/${namespace}/services/box-gateway-metrics`,
  `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies/box-allow-app`,
  `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies/box-allow-app-gateway-metrics`,
];
const cortexPolicyPath = `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies/box-allow-cortex`;

/** The chart's cluster-scoped objects, renamed for this suite, to delete afterwards. */
const clusterScoped: string[] = [];
let operator: RunningOperator | undefined;

function clientWithToken(token: string): { client: KubeClient; kubeConfig: KubeConfig } {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromOptions({
    clusters: [{ name: "testbed", server: kubernetes.server, skipTLSVerify: true }],
    users: [{ name: "sa", token }],
    contexts: [{ name: "testbed", cluster: "testbed", user: "sa" }],
    currentContext: "testbed",
  });
  return { client: new KubeClient(kubeConfig), kubeConfig };
}

async function tokenOf(accountNamespace: string, account: string): Promise<string> {
  const issued = await admin.create<{ status?: { token?: string } }>(
    `/api/v1/namespaces/${accountNamespace}/serviceaccounts/${account}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  );
  if (!issued.status?.token) throw new Error(`no token for ${accountNamespace}/${account}`);
  return issued.status.token;
}

/** The chart's ServiceAccount and RBAC, rendered by Helm; cluster-wide names get this suite's suffix. */
async function applyChartRbac(): Promise<void> {
  const { stdout } = await run(binPath("helm"), [
    "template",
    "remram-operator",
    join(repoRoot, "charts/remram-operator"),
    "-n",
    releaseNamespace,
    "--set",
    `applianceNamespaces={${namespace}}`,
    "--set",
    "ingressController.enabled=false",
    "--show-only",
    "templates/serviceaccount.yaml",
    "--show-only",
    "templates/rbac.yaml",
  ]);
  const objects = (loadAll(stdout) as (KubeObject | null)[]).filter(
    (object): object is KubeObject => object !== null,
  );
  const rename = (name: string) => `${name}-app-test-${suffix}`;
  for (const object of objects) {
    // The device plugin's Role is kube-system's, shared with every other suite: nothing here needs it.
    if (object.metadata.namespace === "kube-system") continue;
    const clusterWide = object.kind === "ClusterRole" || object.kind === "ClusterRoleBinding";
    if (clusterWide) {
      object.metadata.name = rename(object.metadata.name);
      const binding = object as KubeObject & { roleRef?: { name: string } };
      if (binding.roleRef) binding.roleRef.name = rename(binding.roleRef.name);
    }
    const path = clusterWide
      ? `${rbac}/${object.kind.toLowerCase()}s/${object.metadata.name}`
      : objectPath(object);
    if (clusterWide) clusterScoped.push(path);
    await admin.send("PATCH", path, {
      query: { fieldManager: "remram-app-test", force: "true" },
      body: object,
      contentType: "application/apply-patch+yaml",
    });
  }
}

/** Whether `path` is there (undefined: a 403 or 404 says no). */
const present = async (path: string) => (await admin.get<KubeObject>(path)) !== undefined;

const setAppEnabled = (enabled: boolean) => admin.mergePatch(appliancePath, { spec: { app: { enabled } } });

beforeAll(async () => {
  await installCrds(admin);
  await createNamespace(admin, releaseNamespace);
  await createNamespace(admin, namespace);
  await applyChartRbac();
  const { kubeConfig } = clientWithToken(await tokenOf(releaseNamespace, "remram-operator"));
  // The chart's leader-election Role is in the release namespace; workloads are watched in the appliance's.
  operator = await startTestOperator(kubeConfig, namespace, suffix, { leaseNamespace: releaseNamespace });
  await admin.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: { household: { id: "home", members: [{ id: "alice" }] } },
  });
}, 120_000);

afterAll(async () => {
  await operator?.stop();
  for (const path of [
    `/api/v1/namespaces/${namespace}`,
    `/api/v1/namespaces/${releaseNamespace}`,
    ...clusterScoped,
  ])
    await admin.delete(path);
});

describe("remram-app, made with the chart's RBAC", () => {
  it("gets its ServiceAccount, a Role of exactly get on its own appliance, the binding, its Deployment, Service and NetworkPolicies", async () => {
    await waitFor(
      async () => {
        for (const path of appObjects) if (!(await present(path))) throw new Error(`${path} is missing`);
        return true;
      },
      { what: "remram-app's objects", timeoutMs: 60_000, intervalMs: 500 },
    );
    const role = await admin.get<KubeObject & { rules: unknown[] }>(
      `${rbac}/namespaces/${namespace}/roles/box-app`,
    );
    expect(role?.rules).toEqual([
      { apiGroups: ["remram.io"], resources: ["remramappliances"], resourceNames: ["box"], verbs: ["get"] },
    ]);
    const cortexPolicy = await admin.get<KubeObject>(cortexPolicyPath);
    expect(JSON.stringify(cortexPolicy)).toContain("remram-app");
  });

  it("lets the app's own token read its appliance and nothing else", async () => {
    const { client: app } = clientWithToken(await tokenOf(namespace, "box-app"));
    // RBAC's authorizer reads bindings from a cache: the first answer may predate the binding.
    const appliance = await waitFor(() => app.get<KubeObject>(appliancePath), {
      what: "the app reading its appliance",
      timeoutMs: 15_000,
      intervalMs: 250,
    });
    expect(appliance.metadata.name).toBe("box");
    const refused = async (path: string) => {
      const error = await app.send("GET", path).catch((caught: unknown) => caught);
      return error instanceof KubeApiError && error.status === 403;
    };
    expect(await refused(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`)).toBe(true);
    expect(await refused(`/api/v1/namespaces/${namespace}/secrets`)).toBe(true);
    expect(await refused(`/apis/remram.io/v1alpha1/namespaces/${namespace}/artifactproposals`)).toBe(true);
    expect(await refused("/apis/remram.io/v1alpha1/remramappliances")).toBe(true);
  });

  it("makes zero API writes when reconciling the converged appliance again", async () => {
    const reconciler = operator?.controllers.find((each) => each.name === "appliance");
    // Converged: two reconciles in a row that write nothing.
    await waitFor(
      async () => {
        const writes = operator?.client.totalWrites() ?? 0;
        reconciler?.enqueue(`${namespace}/box`);
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        return operator?.client.totalWrites() === writes ? true : undefined;
      },
      { what: "a reconcile without writes", timeoutMs: 60_000, intervalMs: 0 },
    );
    const versions = async () =>
      Promise.all(
        appObjects.map(async (path) => (await admin.get<KubeObject>(path))?.metadata.resourceVersion),
      );
    const before = await versions();
    const writes = operator?.client.totalWrites();
    for (let round = 0; round < 3; round++) {
      reconciler?.enqueue(`${namespace}/box`);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
    expect(operator?.client.totalWrites()).toBe(writes);
    expect(await versions()).toEqual(before);
  });

  it("deletes every object of the app when spec.app.enabled turns false, Cortex no longer admits it, and true brings them back", async () => {
    await setAppEnabled(false);
    await waitFor(
      async () => {
        for (const path of appObjects) if (await present(path)) throw new Error(`${path} is still there`);
        const policy = await admin.get<KubeObject>(cortexPolicyPath);
        return JSON.stringify(policy).includes("remram-app") ? undefined : true;
      },
      { what: "remram-app's objects deleted", timeoutMs: 60_000, intervalMs: 500 },
    );
    await setAppEnabled(true);
    await waitFor(
      async () => {
        for (const path of appObjects) if (!(await present(path))) throw new Error(`${path} is missing`);
        return true;
      },
      { what: "remram-app's objects back", timeoutMs: 60_000, intervalMs: 500 },
    );
  });
});
