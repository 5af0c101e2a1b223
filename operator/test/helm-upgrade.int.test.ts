import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, repoRoot } from "../../test/harness/src/paths.js";
import { createKwokNode, deleteKwokNode } from "../../test/harness/src/services/kwok-nodes.js";
import { adminClient, createNamespace, installCrds, runSuffix } from "./cluster.js";

// The upgrade path a box owner takes: `helm install`, `helm upgrade` with a changed value, `helm rollback`,
// `helm uninstall` — against the real API server, with the operator pod scheduled onto a kwok node.
const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const { client } = adminClient();
const suffix = runSuffix();
const release = `remram-${suffix}`;
const releaseNamespace = `remram-system-up-${suffix}`;
const applianceNamespace = `remram-up-${suffix}`;
const node = `helm-node-${suffix}`;
const chart = join(repoRoot, "charts/remram-operator");

const helm = (...args: string[]) =>
  run(binPath("helm"), [...args, `--kubeconfig=${kubernetes.kubeconfig}`, "-n", releaseNamespace], {
    maxBuffer: 16 * 1024 * 1024,
  });

interface OperatorDeployment {
  metadata: { generation: number };
  spec: { template: { spec: { containers: { env?: { name: string; value?: string }[] }[] } } };
  status?: { observedGeneration?: number; availableReplicas?: number };
}

async function operatorDeployment(): Promise<OperatorDeployment | undefined> {
  return client.get<OperatorDeployment>(
    `/apis/apps/v1/namespaces/${releaseNamespace}/deployments/remram-operator`,
  );
}

function envOf(deployment: OperatorDeployment | undefined, name: string): string | undefined {
  return deployment?.spec.template.spec.containers[0]?.env?.find((entry) => entry.name === name)?.value;
}

async function revisions(): Promise<{ revision: number; status: string }[]> {
  const { stdout } = await helm("history", release, "-o", "json");
  return JSON.parse(stdout) as { revision: number; status: string }[];
}

const appliancePath = `/apis/remram.io/v1alpha1/namespaces/${applianceNamespace}/remramappliances/box`;

beforeAll(async () => {
  await createNamespace(client, releaseNamespace);
  await createNamespace(client, applianceNamespace);
  await createKwokNode(kubernetes, { name: node, cpu: "8", memory: "32Gi" });
  // Other suites applied the CRDs without Helm; a box upgraded from a hand-applied install is the same case.
  await helm(
    "install",
    release,
    chart,
    "--take-ownership",
    "--set",
    `applianceNamespaces={${applianceNamespace}}`,
    "--wait",
    "--timeout=180s",
  );
  await client.create(`/apis/remram.io/v1alpha1/namespaces/${applianceNamespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace: applianceNamespace },
    spec: { ollama: { gpu: "disabled" } },
  });
}, 240_000);

afterAll(async () => {
  await helm("uninstall", release, "--wait").catch(() => undefined);
  await client.delete(`/api/v1/namespaces/${applianceNamespace}`);
  await client.delete(`/api/v1/namespaces/${releaseNamespace}`);
  await deleteKwokNode(kubernetes, node).catch(() => undefined);
  // Uninstall removes the approval policy; later suites expect the committed CRDs and policy in place.
  await installCrds(client);
});

describe("helm upgrade of the operator chart", () => {
  it("rolls a changed value out, keeps CRDs and appliances, rolls back, and keeps the CRDs on uninstall", async () => {
    const installed = await operatorDeployment();
    expect(envOf(installed, "REMRAM_RESYNC_SECONDS")).toBe("300");
    expect(installed?.status?.availableReplicas).toBe(1);

    await helm(
      "upgrade",
      release,
      chart,
      "--reuse-values",
      "--set",
      "resyncSeconds=120",
      "--wait",
      "--timeout=180s",
    );
    const upgraded = await operatorDeployment();
    expect(envOf(upgraded, "REMRAM_RESYNC_SECONDS")).toBe("120");
    expect(upgraded?.metadata.generation).toBeGreaterThan(installed?.metadata.generation ?? 0);
    expect(upgraded?.status?.observedGeneration).toBe(upgraded?.metadata.generation);
    expect(upgraded?.status?.availableReplicas).toBe(1);
    expect((await revisions()).map((entry) => entry.status)).toEqual(["superseded", "deployed"]);
    const crd = await client.get<{ status?: { conditions?: { type: string; status: string }[] } }>(
      "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/remramappliances.remram.io",
    );
    expect(crd?.status?.conditions?.find((condition) => condition.type === "Established")?.status).toBe(
      "True",
    );
    expect(await client.get(appliancePath)).toBeDefined();

    await helm("rollback", release, "1", "--wait", "--timeout=180s");
    expect(envOf(await operatorDeployment(), "REMRAM_RESYNC_SECONDS")).toBe("300");

    await helm("uninstall", release, "--wait");
    expect(await operatorDeployment()).toBeUndefined();
    // crds.keep: the CRDs, and with them every appliance, outlive the release.
    expect(
      await client.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/remramappliances.remram.io"),
    ).toBeDefined();
    expect(await client.get(appliancePath)).toBeDefined();
  }, 600_000);
});
