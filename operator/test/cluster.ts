/**
 * Fixtures for the operator's integration suites on the test bed's real API server: install the generated CRDs
 * and approval policy exactly as committed, make namespaces, kwok nodes and the local volumes a k3s node's
 * local-path provisioner would provide.
 */
import { randomBytes } from "node:crypto";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { loadAll } from "js-yaml";
import { pino } from "pino";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { logDir } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { generatedFiles } from "../src/api/generated-files.js";
import { childName } from "../src/appliance/children/shared.js";
import { loadHardwareProfiles } from "../src/appliance/hardware-profiles.js";
import { defaultImages } from "../src/config.js";
import { type OperatorOptions, type RunningOperator, startOperator } from "../src/operator.js";
import { KubeApiError, KubeClient, type KubeObject } from "../src/runtime/kube-client.js";

export function adminClient(): { client: KubeClient; kubeConfig: KubeConfig } {
  const endpoints = testbedEndpoints("kubernetes");
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(endpoints.kubeconfig);
  return { client: new KubeClient(kubeConfig), kubeConfig };
}

export const runSuffix = (): string => randomBytes(3).toString("hex");

/** Apply crds/*.yaml (CRDs, then the admission policy) and wait until every CRD is Established. */
export async function installCrds(client: KubeClient): Promise<void> {
  const documents = [...generatedFiles()]
    .filter(([path]) => path.startsWith("crds/"))
    .flatMap(([, text]) => loadAll(text) as KubeObject[]);
  for (const document of documents.filter((each) => each.kind === "CustomResourceDefinition")) {
    await client.send(
      "PATCH",
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${document.metadata.name}`,
      {
        query: { fieldManager: "remram-test", force: "true" },
        body: document,
        contentType: "application/apply-patch+yaml",
      },
    );
  }
  for (const document of documents.filter((each) => each.kind !== "CustomResourceDefinition")) {
    const plural =
      document.kind === "ValidatingAdmissionPolicy"
        ? "validatingadmissionpolicies"
        : "validatingadmissionpolicybindings";
    await client.send("PATCH", `/apis/admissionregistration.k8s.io/v1/${plural}/${document.metadata.name}`, {
      query: { fieldManager: "remram-test", force: "true" },
      body: document,
      contentType: "application/apply-patch+yaml",
    });
  }
  for (const document of documents.filter((each) => each.kind === "CustomResourceDefinition")) {
    await waitFor(
      async () => {
        const crd = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
          `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${document.metadata.name}`,
        );
        return crd?.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
          ? true
          : undefined;
      },
      { what: `CRD ${document.metadata.name} established`, timeoutMs: 30_000 },
    );
  }
}

export async function createNamespace(
  client: KubeClient,
  name: string,
  labels: Record<string, string> = {},
): Promise<void> {
  await client.create("/api/v1/namespaces", {
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name, labels },
  });
}

/**
 * Static volumes for the three claims of appliance `appliance` in `namespace` on kwok nodes (pods there are fake, so
 * nothing could provision). Each is reserved for its claim (claimRef): an unreserved volume would bind any pending
 * claim of the same class, such as one of an earlier suite's appliance whose namespace is still being deleted, and
 * be Released when that claim goes. They carry the default StorageClass's name when there is one (the real node's
 * `local-path`, default as on k3s), which claims get on admission.
 */
export async function createVolumes(
  client: KubeClient,
  prefix: string,
  namespace: string,
  appliance: string,
): Promise<void> {
  const classes = await client.get<{
    items: { metadata: { name: string; annotations?: Record<string, string> } }[];
  }>("/apis/storage.k8s.io/v1/storageclasses");
  const defaultClass = classes?.items.find(
    (item) => item.metadata.annotations?.["storageclass.kubernetes.io/is-default-class"] === "true",
  )?.metadata.name;
  const claims = [
    childName(appliance, "ollama-models"),
    childName(appliance, "workspace"),
    `data-${childName(appliance, "opensearch")}-0`,
  ];
  for (const [index, claim] of claims.entries()) {
    await client.create("/api/v1/persistentvolumes", {
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: `${prefix}-${index}`, labels: { "remram.io/test-volume": prefix } },
      spec: {
        capacity: { storage: "1Ti" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        ...(defaultClass ? { storageClassName: defaultClass } : {}),
        claimRef: { namespace, name: claim },
        hostPath: { path: `/tmp/${prefix}-${index}` },
      },
    });
  }
}

export function getStatusCondition(
  object:
    | { status?: { conditions?: { type: string; status: string; reason: string; message?: string }[] } }
    | undefined,
  type: string,
): { status: string; reason: string; message?: string } | undefined {
  return object?.status?.conditions?.find((condition) => condition.type === type);
}

type WithConditions = KubeObject & {
  status?: { conditions?: { type: string; status: string; reason: string; message?: string }[] };
};

/** Wait up to a minute until the object at `path` has condition `type` = status/reason; a timeout names them all. */
export function untilCondition<T extends WithConditions>(
  client: KubeClient,
  path: string,
  type: string,
  status: string,
  reason: string,
): Promise<T> {
  return waitFor(
    async () => {
      const current = await client.get<T>(path);
      const condition = getStatusCondition(current, type);
      if (current !== undefined && condition?.status === status && condition.reason === reason)
        return current;
      throw new Error(JSON.stringify(current?.status?.conditions ?? []));
    },
    { what: `${type}=${status}/${reason}`, timeoutMs: 60_000, intervalMs: 500 },
  );
}

/**
 * Retry a request the approval policy refuses as "not the operator" until the committed policy is in force: a
 * changed admission policy takes effect a moment after it is stored.
 */
export async function untilApprovalPolicyAccepts(request: () => Promise<unknown>): Promise<void> {
  await waitFor(
    async () => {
      try {
        await request();
        return true;
      } catch (error) {
        if (error instanceof KubeApiError && error.message.includes("only the remram operator"))
          return undefined;
        throw error;
      }
    },
    { what: "the committed approval policy in force", timeoutMs: 30_000, intervalMs: 500 },
  );
}

/**
 * The operator in this process against the test bed's API server, as the chart runs it for one appliance namespace
 * (its warnings in a log file beside the test bed's); resolves once it holds its Lease.
 */
/**
 * `user` as an approver in `namespace`: a Role with what the chart's remram-approver grants on ArtifactProposals
 * (get, list, approve, and patching their status), bound to the user.
 */
export async function grantApprover(client: KubeClient, namespace: string, user: string): Promise<void> {
  await client.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/roles`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: { name: "approver", namespace },
    rules: [
      { apiGroups: ["remram.io"], resources: ["artifactproposals"], verbs: ["get", "list", "approve"] },
      { apiGroups: ["remram.io"], resources: ["artifactproposals/status"], verbs: ["patch"] },
    ],
  });
  await client.create(`/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings`, {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: `approver-${user}`, namespace },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "approver" },
    subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user }],
  });
}

export async function startTestOperator(
  kubeConfig: KubeConfig,
  namespace: string,
  suffix: string,
  overrides: Partial<OperatorOptions> = {},
): Promise<RunningOperator> {
  const operator = await startOperator({
    kubeConfig,
    log: pino(
      { level: "warn" },
      pino.destination({ dest: join(logDir, `operator-${suffix}.log`), sync: true }),
    ),
    identity: `test-operator-${suffix}`,
    leaseNamespace: namespace,
    images: defaultImages,
    profiles: loadHardwareProfiles(join(import.meta.dirname, "../../hardware-profiles")),
    probePort: 0,
    resyncMs: 60_000,
    watchNamespaces: [namespace],
    // No model is pulled in these suites: a closed port.
    ollamaUrl: () => "http://127.0.0.1:9",
    ...overrides,
  });
  await waitFor(async () => (operator.isLeader() ? true : undefined), {
    what: "leadership",
    timeoutMs: 30_000,
  });
  return operator;
}
