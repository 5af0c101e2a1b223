// `helm test` of the chart on the real node: `helm install` (the operator only, no appliance) in namespaces of its
// own under restricted Pod Security, `helm test` runs both test Pods there (the operator's /readyz through its
// Service past the NetworkPolicy; the four CRDs served by discovery), `--logs` shows what both printed, a pod
// without the test's labels is refused by the policy, and NOTES differ between install and upgrade. Needs the node service (REMRAM_TESTBED=node); skipped without it.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { nodeNamespace, operatorChartValues } from "../../test/harness/src/appliance.js";
import { binPath, repoRoot, runDir } from "../../test/harness/src/paths.js";
import { kubectl as runKubectl } from "../../test/harness/src/services/kubectl.js";
import { adminClient, installCrds } from "./cluster.js";

const run = promisify(execFile);
const { node, kubernetes } = inject("testbed");
const suffix = randomBytes(3).toString("hex");
const release = `chart-test-${suffix}`;
const operatorNamespace = `remram-system-ht-${suffix}`;
const applianceNamespace = `remram-ht-${suffix}`;
const chart = join(repoRoot, "charts/remram-operator");
const valuesFile = join(runDir, `helm-test-values-${suffix}.json`);

const kubectl = (args: readonly string[], input?: string) =>
  runKubectl(kubernetes?.kubeconfig ?? "", args, input, 150_000);
const helm = async (...args: string[]) => {
  const { stdout } = await run(
    binPath("helm"),
    [...args, `--kubeconfig=${kubernetes?.kubeconfig ?? ""}`, "-n", operatorNamespace],
    { maxBuffer: 16 * 1024 * 1024 },
  );
  return stdout;
};

/** What `helm install` printed: the manifest summary and NOTES. */
let installOutput = "";

describe.skipIf(node === undefined)("helm test of the operator chart on the real node", () => {
  beforeAll(async () => {
    if (node === undefined) return;
    for (const name of [operatorNamespace, applianceNamespace]) {
      await kubectl(["apply", "-f", "-"], JSON.stringify(nodeNamespace(node, name, true)));
    }
    writeFileSync(valuesFile, JSON.stringify(operatorChartValues(node, [applianceNamespace])));
    // Other suites applied the CRDs without Helm; --take-ownership adopts them.
    installOutput = await helm(
      "install",
      release,
      chart,
      "--take-ownership",
      "-f",
      valuesFile,
      "--wait",
      "--timeout=180s",
    );
  }, 240_000);

  afterAll(async () => {
    if (node === undefined) return;
    await helm("uninstall", release, "--wait").catch(() => undefined);
    for (const name of [operatorNamespace, applianceNamespace]) {
      await kubectl(["delete", "namespace", name, "--wait=false"]).catch(() => undefined);
    }
    // Uninstall removes the approval policy; later suites expect the committed CRDs and policy in place.
    await installCrds(adminClient().client);
  }, 180_000);

  it("prints the first-install NOTES", () => {
    expect(installOutput).toContain(
      `Remram operator ${node?.images.app.operator.split(":").pop()} is installed`,
    );
    expect(installOutput).toContain(`helm test ${release} -n ${operatorNamespace}`);
  });

  it("passes both test Pods under restricted Pod Security, their logs shown by helm test --logs", async () => {
    const output = await helm("test", release, "--logs", "--timeout=180s");
    expect(output).toMatch(
      new RegExp(`TEST SUITE:\\s+${release}-test-operator-ready[\\s\\S]*?Phase:\\s+Succeeded`),
    );
    expect(output).toMatch(
      new RegExp(`TEST SUITE:\\s+${release}-test-crds-established[\\s\\S]*?Phase:\\s+Succeeded`),
    );
    expect(output).toMatch(/\/readyz: 200 ok/);
    for (const crd of ["remramappliances", "dreamschedules", "dimensionpolicies", "artifactproposals"]) {
      expect(output).toContain(`${crd}.remram.io: Established`);
    }
    // Kept (Completed) for `helm test --logs`, replaced by the next run.
    const pods = await kubectl(["-n", operatorNamespace, "get", "pods", "-o", "name"]);
    expect(pods).toContain(`pod/${release}-test-crds-established`);
  }, 240_000);

  it("keeps a pod without the test's labels away from the probe port", async () => {
    const image = node?.images.app.operator ?? "";
    const url = `http://remram-operator-metrics.${operatorNamespace}.svc:8081/readyz`;
    const stranger = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "stranger", namespace: operatorNamespace, labels: { app: "stranger" } },
      spec: {
        restartPolicy: "Never",
        automountServiceAccountToken: false,
        securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: "RuntimeDefault" } },
        containers: [
          {
            name: "fetch",
            image,
            imagePullPolicy: "Never",
            command: [
              "node",
              "-e",
              `fetch(${JSON.stringify(url)}, { signal: AbortSignal.timeout(5000) })
                 .then((r) => console.log("reached " + r.status), (e) => console.log("blocked " + e.name))`,
            ],
            securityContext: {
              allowPrivilegeEscalation: false,
              capabilities: { drop: ["ALL"] },
              readOnlyRootFilesystem: true,
            },
          },
        ],
      },
    };
    await kubectl(["apply", "-f", "-"], JSON.stringify(stranger));
    await kubectl([
      "-n",
      operatorNamespace,
      "wait",
      "--for=jsonpath={.status.phase}=Succeeded",
      "pod/stranger",
      "--timeout=90s",
    ]);
    expect((await kubectl(["-n", operatorNamespace, "logs", "stranger"])).trim()).toMatch(/^blocked/);
  }, 120_000);

  it("prints the shorter upgrade NOTES", async () => {
    const output = await helm("upgrade", release, chart, "-f", valuesFile, "--wait", "--timeout=180s");
    expect(output).toMatch(/Remram operator upgraded to \S+ \(chart \S+, revision 2\)/);
    expect(output).not.toContain("kubectl apply -f - <<EOF");
  }, 240_000);
});
