/**
 * The operator in-process under the chart's own RBAC (rbac.yaml, rendered by Helm), talking to a real Cortex on the
 * test bed's OpenSearch with a git workspace: for suites whose point is what the operator does, and may do, as it
 * runs in a cluster. Cluster-scoped names carry the run's suffix, so suites never collide.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import type { FastifyInstance } from "fastify";
import { loadAll } from "js-yaml";
import { pino } from "pino";
import { buildApp, cortexConfig } from "../../cortex/src/index.js";
import { maturationPlugin } from "../../cortex/src/maturation.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, repoRoot } from "../../test/harness/src/paths.js";
import { defaultOperatorNamespace, defaultOperatorServiceAccount } from "../src/api/generated-files.js";
import { cortexCredentialKey } from "../src/appliance/children/cortex.js";
import { childName, managedBy } from "../src/appliance/children/shared.js";
import { loadHardwareProfiles } from "../src/appliance/hardware-profiles.js";
import { defaultImages } from "../src/config.js";
import { type RunningOperator, startOperator } from "../src/operator.js";
import type { KubeClient, KubeObject } from "../src/runtime/kube-client.js";
import { createNamespace } from "./cluster.js";

const run = promisify(execFile);
const rbacApi = "/apis/rbac.authorization.k8s.io/v1";

/** Each caller's Cortex credential in these suites (Cortex wants 16+ characters, one per caller). */
export const cortexCredentials = {
  operator: "operator-cortex-credential-0123456789",
  gateway: "gateway-cortex-credential-0123456789",
  app: "app-cortex-credential-0123456789",
} as const;

export function cortexHeaders(caller: keyof typeof cortexCredentials): Record<string, string> {
  return { authorization: `Bearer ${cortexCredentials[caller]}`, "content-type": "application/json" };
}

/** Objects of one chart template, as `helm template` renders them for this release and appliance namespace. */
export async function chartObjects(template: string, applianceNamespace: string): Promise<KubeObject[]> {
  const { stdout } = await run(binPath("helm"), [
    "template",
    "remram-operator",
    join(repoRoot, "charts/remram-operator"),
    "-n",
    defaultOperatorNamespace,
    "--set",
    `applianceNamespaces={${applianceNamespace}}`,
    "--show-only",
    `templates/${template}`,
  ]);
  return (loadAll(stdout) as (KubeObject | null)[]).filter((each): each is KubeObject => each !== null);
}

function rbacPath(object: KubeObject): string {
  const plural = `${object.kind.toLowerCase()}s`;
  const namespace = object.metadata.namespace;
  return namespace === undefined ? `${rbacApi}/${plural}` : `${rbacApi}/namespaces/${namespace}/${plural}`;
}

/** Create RBAC objects under suffixed names (and role references to match); returns their paths for cleanup. */
export async function createRbac(
  client: KubeClient,
  objects: KubeObject[],
  suffix: string,
): Promise<string[]> {
  const paths: string[] = [];
  for (const object of objects) {
    const renamed = {
      ...object,
      metadata: { ...object.metadata, name: `${object.metadata.name}-${suffix}` },
      ...("roleRef" in object
        ? {
            roleRef: {
              ...(object.roleRef as { name: string }),
              name: `${(object.roleRef as { name: string }).name}-${suffix}`,
            },
          }
        : {}),
    };
    await client.create(rbacPath(renamed), renamed);
    paths.push(`${rbacPath(renamed)}/${renamed.metadata.name}`);
  }
  return paths;
}

export interface OperatorAndCortex {
  operator: RunningOperator;
  /** The operator's Lease in defaultOperatorNamespace (suffixed: suites never share one). */
  leaseName: string;
  cortexUrl: string;
  workspaceDir: string;
  stop(): Promise<void>;
}

/** A kubeconfig of the chart's operator ServiceAccount (a TokenRequest token): the identity the chart binds. */
export async function operatorKubeConfig(client: KubeClient, kubeConfig: KubeConfig): Promise<KubeConfig> {
  const saPath = `/api/v1/namespaces/${defaultOperatorNamespace}/serviceaccounts`;
  if ((await client.get(`/api/v1/namespaces/${defaultOperatorNamespace}`)) === undefined)
    await createNamespace(client, defaultOperatorNamespace);
  if ((await client.get(`${saPath}/${defaultOperatorServiceAccount}`)) === undefined) {
    await client.create(saPath, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: defaultOperatorServiceAccount, namespace: defaultOperatorNamespace },
    });
  }
  const request = await client.create<{ status: { token: string } }>(
    `${saPath}/${defaultOperatorServiceAccount}/token`,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest", spec: { expirationSeconds: 3600 } },
  );
  const cluster = kubeConfig.getCurrentCluster();
  if (cluster === null) throw new Error("the admin kubeconfig has no cluster");
  const operatorConfig = new KubeConfig();
  operatorConfig.loadFromOptions({
    clusters: [cluster],
    users: [{ name: "remram-operator", token: request.status.token }],
    contexts: [{ name: "remram-operator", cluster: cluster.name, user: "remram-operator" }],
    currentContext: "remram-operator",
  });
  return operatorConfig;
}

/**
 * Cortex, appliance `box` in `namespace` (the operator's Cortex credential in its Secret), and the operator watching that
 * namespace under the chart's ClusterRole and Roles. The namespace and the CRDs must exist.
 */
export async function startOperatorAndCortex(
  client: KubeClient,
  kubeConfig: KubeConfig,
  namespace: string,
  suffix: string,
  options: {
    /** Cortex embeds with this Ollama's model (the test bed's); without it Cortex is lexical only. */
    ollama?: { url: string; embedModel: string };
    /** The appliance's household, as Cortex is told it (its household-scope knowledge). */
    householdId?: string;
  } = {},
): Promise<OperatorAndCortex> {
  const scratch = mkdtempSync(join(tmpdir(), "remram-operator-"));
  const workspaceDir = join(scratch, "workspace");
  mkdirSync(workspaceDir, { recursive: true });
  const cortex: FastifyInstance = await buildApp({
    config: cortexConfig.parse({
      opensearchUrl: testbedEndpoints("opensearch").url,
      indexPrefix: `op-${suffix}`,
      ...(options.ollama === undefined
        ? {}
        : { ollamaUrl: options.ollama.url, embedModel: options.ollama.embedModel }),
      credentials: cortexCredentials,
      ...(options.householdId === undefined ? {} : { householdId: options.householdId }),
      logLevel: "silent",
      port: 0,
      host: "127.0.0.1",
    }),
    plugins: [
      maturationPlugin({
        workspaceDir,
        archiveDir: join(scratch, "archive"),
        gitAuthor: { name: "Remram Test", email: "test@remram.invalid" },
      }),
    ],
  });
  const cortexUrl = await cortex.listen({ host: "127.0.0.1", port: 0 });
  // The operator's credential Secret, labelled as the operator's own so it keeps this value rather than make one.
  await client.create(`/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: {
      name: childName("box", "cortex-operator"),
      namespace,
      labels: { "app.kubernetes.io/managed-by": managedBy },
    },
    stringData: { [cortexCredentialKey]: cortexCredentials.operator },
  });
  await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: { ollama: { gpu: "disabled" } },
  });
  // The release namespace and ServiceAccount first: the chart's Roles and bindings live there.
  const operatorConfig = await operatorKubeConfig(client, kubeConfig);
  const rbac = await createRbac(client, await chartObjects("rbac.yaml", namespace), suffix);
  const operator = await startOperator({
    kubeConfig: operatorConfig,
    log: pino({ level: "silent" }),
    identity: `operator-${suffix}`,
    // The chart grants the Lease only in its release namespace.
    leaseNamespace: defaultOperatorNamespace,
    leaseName: `remram-operator-${suffix}`,
    watchNamespaces: [namespace],
    images: defaultImages,
    profiles: loadHardwareProfiles(join(repoRoot, "hardware-profiles")),
    probePort: 0,
    resyncMs: 60_000,
    cortexUrl: () => cortexUrl,
  });
  return {
    operator,
    leaseName: `remram-operator-${suffix}`,
    cortexUrl,
    workspaceDir,
    stop: async () => {
      await operator.stop();
      await cortex.close();
      for (const path of rbac) await client.delete(path);
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}
