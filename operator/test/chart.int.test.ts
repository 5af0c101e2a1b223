import { execFile } from "node:child_process";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, repoRoot, runDir } from "../../test/harness/src/paths.js";
import { adminClient, createNamespace, installCrds, runSuffix } from "./cluster.js";

const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const { client } = adminClient();
const suffix = runSuffix();
const releaseNamespace = `remram-system-${suffix}`;
const applianceNamespace = `remram-${suffix}`;
const otherNamespace = `elsewhere-${suffix}`;
const operatorUser = `system:serviceaccount:${releaseNamespace}:remram-operator`;

const kubectl = (...args: string[]) =>
  run(binPath("kubectl"), [`--kubeconfig=${kubernetes.kubeconfig}`, ...args], {
    maxBuffer: 16 * 1024 * 1024,
  });

async function operatorCan(verb: string, resource: string, namespace?: string): Promise<boolean> {
  const scope = namespace === undefined ? ["--all-namespaces"] : ["-n", namespace];
  const [name, subresource] = resource.split("/");
  const target = [name as string, ...(subresource ? [`--subresource=${subresource}`] : [])];
  try {
    const { stdout } = await kubectl("auth", "can-i", verb, ...target, `--as=${operatorUser}`, ...scope);
    return stdout.trim() === "yes";
  } catch {
    return false;
  }
}

beforeAll(async () => {
  for (const namespace of [releaseNamespace, applianceNamespace, otherNamespace])
    await createNamespace(client, namespace);
  const { stdout } = await run(binPath("helm"), [
    "template",
    "remram-operator",
    join(repoRoot, "charts/remram-operator"),
    "-n",
    releaseNamespace,
    "--set",
    `applianceNamespaces={${applianceNamespace}}`,
    // What `helm install` creates: the `helm test` hooks' pods exist only while `helm test` runs.
    "--skip-tests",
  ]);
  const rendered = join(runDir, `chart-${suffix}.yaml`);
  writeFileSync(rendered, stdout);
  await kubectl(
    "apply",
    "--server-side",
    "--force-conflicts",
    "--field-manager=remram-chart-test",
    "-f",
    rendered,
  );
}, 180_000);

afterAll(async () => {
  for (const namespace of [releaseNamespace, applianceNamespace, otherNamespace]) {
    await client.delete(`/api/v1/namespaces/${namespace}`);
  }
  // The chart's approval policy names this release's operator; later suites expect the committed one.
  await installCrds(client);
});

describe("the Helm chart on a real API server", () => {
  it("renders objects the API server accepts, the approval policy with the release's operator identity", async () => {
    const policy = await client.get<{ spec: { variables: { name: string; expression: string }[] } }>(
      "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies/remram-artifactproposal-approval",
    );
    const isOperator = policy?.spec.variables.find((variable) => variable.name === "isOperator");
    expect(isOperator?.expression).toContain(`'${operatorUser}'`);
  });

  it("grants the operator workloads and Secrets only in the appliance namespaces, and no approve verb", async () => {
    expect(await operatorCan("list", "secrets", applianceNamespace)).toBe(true);
    expect(await operatorCan("patch", "deployments.apps", applianceNamespace)).toBe(true);
    expect(await operatorCan("list", "secrets", otherNamespace)).toBe(false);
    expect(await operatorCan("list", "secrets")).toBe(false);
    expect(await operatorCan("create", "deployments.apps", otherNamespace)).toBe(false);
    expect(await operatorCan("patch", "remramappliances.remram.io/status", applianceNamespace)).toBe(true);
    expect(await operatorCan("approve", "artifactproposals.remram.io", applianceNamespace)).toBe(false);
    // It asks whether an approver holds `approve` before promoting, and nothing else of authorization.
    expect(await operatorCan("create", "subjectaccessreviews.authorization.k8s.io")).toBe(true);
    expect(
      await operatorCan("create", "localsubjectaccessreviews.authorization.k8s.io", applianceNamespace),
    ).toBe(false);
    expect(await operatorCan("update", "leases.coordination.k8s.io", releaseNamespace)).toBe(true);
    expect(await operatorCan("update", "leases.coordination.k8s.io", applianceNamespace)).toBe(false);
    expect(await operatorCan("*", "*", applianceNamespace)).toBe(false);
  });

  it("lets the operator keep the gateway's Ingress and cert-manager's objects in the appliance namespaces only", async () => {
    for (const verb of ["watch", "create", "patch", "delete"])
      expect(await operatorCan(verb, "ingresses.networking.k8s.io", applianceNamespace), verb).toBe(true);
    expect(await operatorCan("create", "ingresses.networking.k8s.io", otherNamespace)).toBe(false);
    // cert-manager's kinds are not served here, so kubectl cannot map them: ask the authorizer directly.
    const review = async (resource: string, namespace?: string): Promise<boolean> => {
      const answer = await client.create<{ status?: { allowed?: boolean } }>(
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SubjectAccessReview",
          spec: {
            user: operatorUser,
            groups: ["system:serviceaccounts", "system:authenticated"],
            resourceAttributes: {
              group: "cert-manager.io",
              resource,
              verb: "create",
              ...(namespace ? { namespace } : {}),
            },
          },
        },
      );
      return answer.status?.allowed === true;
    };
    expect(await review("certificates", applianceNamespace)).toBe(true);
    expect(await review("issuers", applianceNamespace)).toBe(false);
    expect(await review("clusterissuers")).toBe(false);
    expect(await review("certificates", otherNamespace)).toBe(false);
  });

  it("lets the operator read RuntimeClasses (k3s's nvidia) and never write one", async () => {
    for (const verb of ["get", "list", "watch"])
      expect(await operatorCan(verb, "runtimeclasses.node.k8s.io"), verb).toBe(true);
    for (const verb of ["create", "patch", "update", "delete"])
      expect(await operatorCan(verb, "runtimeclasses.node.k8s.io"), verb).toBe(false);
  });

  it("lets the operator read the ingress controller's EndpointSlices in its namespace only, and write none", async () => {
    for (const verb of ["list", "watch"])
      expect(await operatorCan(verb, "endpointslices.discovery.k8s.io", "kube-system"), verb).toBe(true);
    for (const verb of ["create", "patch", "delete"])
      expect(await operatorCan(verb, "endpointslices.discovery.k8s.io", "kube-system"), verb).toBe(false);
    expect(await operatorCan("list", "endpointslices.discovery.k8s.io", "default")).toBe(false);
    expect(await operatorCan("list", "endpointslices.discovery.k8s.io")).toBe(false);
  });

  it("runs the operator Deployment under the restricted pod security standard", async () => {
    const { stdout, stderr } = await kubectl(
      "label",
      "--dry-run=server",
      "--overwrite",
      `namespace/${releaseNamespace}`,
      "pod-security.kubernetes.io/enforce=restricted",
    );
    // The API server warns about existing pods that would violate the level; there must be none.
    expect(stdout).toContain("labeled");
    expect(stderr).not.toMatch(/violate/i);
    const pods = await client.get<{ items: unknown[] }>(`/api/v1/namespaces/${releaseNamespace}/pods`);
    expect(pods?.items.length, "the operator pod exists, so the check above had something to judge").toBe(1);
    const deployment = await client.get<{
      spec: { template: { spec: { securityContext: Record<string, unknown> } } };
    }>(`/apis/apps/v1/namespaces/${releaseNamespace}/deployments/remram-operator`);
    expect(deployment?.spec.template.spec.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
  });
});
