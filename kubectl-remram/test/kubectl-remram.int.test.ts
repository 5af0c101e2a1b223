// kubectl-remram as a user gets it, against the test bed's real API server: the npm package built, packed and
// installed from its tarball into an empty folder (run by the machine's own Node, 20 or later), and the krew
// archive's single executable (no Node needed), each running the verbs as an approver, a reader, a user with no
// RBAC and an admin, plus kubectl itself completing `kubectl remram` through kubectl_complete-remram.
import { execFile, execFileSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runSuffix } from "../../operator/test/cluster.js";
import { binPath } from "../../test/harness/src/paths.js";
import { freePort } from "../../test/harness/src/ports.js";
import { buildNpmPackage, buildStamp } from "../src/bundle.js";
import { npmPack, seaArchive } from "../src/release.js";
import { hostPlatform } from "../src/sea.js";
import {
  admin,
  createFixtures,
  deleteFixtures,
  type Fixtures,
  kubeconfigFor,
  kubernetes,
} from "./fixtures.js";

const run = promisify(execFile);
const suffix = runSuffix();
const namespace = `kubectl-remram-${suffix}`;
const scratch = mkdtempSync(join(tmpdir(), "kubectl-remram-int-"));
const home = join(scratch, "home"); // no ~/.kube/config: every cluster case names its kubeconfig
const installDir = join(scratch, "installed");
const krewDir = join(scratch, "krew");
const stamp = buildStamp();

/** The machine's own Node (not the cache's 24), when it has one the package supports. */
function systemNode(): { dir: string; version: string } | undefined {
  for (const dir of ["/usr/local/bin", "/usr/bin", "/bin"]) {
    if (!existsSync(join(dir, "node"))) continue;
    const version = execFileSync(join(dir, "node"), ["--version"], { encoding: "utf8" }).trim();
    if (Number(version.slice(1).split(".")[0]) >= 20) return { dir, version: version.slice(1) };
  }
  return undefined;
}
const machineNode = systemNode();

interface Result {
  code: number;
  stdout: string;
  stderr: string;
}

function exec(file: string, args: readonly string[], path: string): Promise<Result> {
  const env = { PATH: path, HOME: home, LANG: "C.UTF-8" };
  return new Promise((resolve) =>
    execFile(file, args, { env, timeout: 60_000, maxBuffer: 8 * 1024 * 1024 }, (error, stdout, stderr) =>
      resolve({ code: error ? (typeof error.code === "number" ? error.code : -1) : 0, stdout, stderr }),
    ),
  );
}

const systemPath = `${machineNode?.dir ?? join(process.execPath, "..")}:/usr/bin:/bin`;
/** The npm install's bin: `#!/usr/bin/env node` finds the machine's Node first on this PATH. */
const npmBin = (args: readonly string[]) =>
  exec(join(installDir, "node_modules/.bin/kubectl-remram"), args, systemPath);
/** The krew archive's executable, with no Node on PATH at all. */
const seaBin = (args: readonly string[]) =>
  exec(join(krewDir, "kubectl-remram"), args, `${krewDir}:/usr/bin:/bin`);

let fixtures: Fixtures;
let closedPort: string;
const timings: Record<string, number> = {};

beforeAll(async () => {
  mkdirSync(home, { recursive: true });
  mkdirSync(installDir, { recursive: true });
  mkdirSync(krewDir, { recursive: true });
  const platform = hostPlatform();
  if (platform === undefined) throw new Error(`no krew platform for ${process.platform}/${process.arch}`);
  const build = async () => {
    let started = performance.now();
    await buildNpmPackage(stamp);
    const tarball = await npmPack(scratch);
    timings.npmBuildAndPackMs = Math.round(performance.now() - started);
    started = performance.now();
    // Into an empty folder, from the tarball alone: no registry, because the bundle has no dependencies.
    await run("npm", ["install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarball], {
      cwd: installDir,
      env: { ...process.env, npm_config_update_notifier: "false" },
    });
    timings.npmInstallMs = Math.round(performance.now() - started);
    return tarball;
  };
  const sea = async () => {
    const built = await seaArchive(platform, scratch, stamp);
    execFileSync("tar", ["-xzf", built.path, "-C", krewDir]);
    timings.seaArchiveMs = built.durationMs;
  };
  const cluster = async () => {
    const started = performance.now();
    fixtures = await createFixtures(namespace, suffix, scratch);
    closedPort = kubeconfigFor(`https://127.0.0.1:${await freePort()}`, scratch, "closed");
    timings.clusterFixturesMs = Math.round(performance.now() - started);
  };
  const [tarball] = await Promise.all([build(), sea(), cluster()]);
  const manifest = JSON.parse(
    execFileSync("tar", ["-xzOf", tarball, "package/package.json"], { encoding: "utf8" }),
  );
  expect(manifest).not.toHaveProperty("dependencies");
  expect(manifest).not.toHaveProperty("peerDependencies");
  expect(manifest).not.toHaveProperty("optionalDependencies");
  expect(execFileSync("tar", ["-tzf", tarball], { encoding: "utf8" }).trim().split("\n").sort()).toEqual([
    "package/README.md",
    "package/dist/THIRD_PARTY_LICENSES.txt",
    "package/dist/kubectl-remram.mjs",
    "package/dist/kubectl_complete-remram.mjs",
    "package/package.json",
  ]);
  process.stdout.write(`kubectl-remram build and fixtures: ${JSON.stringify(timings)}\n`);
}, 240_000);

afterAll(async () => {
  if (fixtures) await deleteFixtures(namespace, fixtures.approverRole);
  rmSync(scratch, { recursive: true, force: true });
});

const admin_ = () => ["--kubeconfig", kubernetes.kubeconfig, "-n", namespace];
const proposalStatus = async (name: string) =>
  (
    await admin.get<{ status?: { approval?: { by: string; comment?: string; decision: string } } }>(
      `/apis/remram.io/v1alpha1/namespaces/${namespace}/artifactproposals/${name}`,
    )
  )?.status;

describe("the npm package on the machine's Node", () => {
  it("answers --help, -h and help VERB, and a usage error with exit code 2", async () => {
    const help = await npmBin(["--help"]);
    expect(help).toMatchObject({ code: 0, stderr: "" });
    expect(help.stdout).toContain("kubectl remram approve PROPOSAL [--comment TEXT]");
    expect((await npmBin(["-h"])).stdout).toBe(help.stdout);
    expect((await npmBin(["help", "approve"])).stdout).toContain("--comment TEXT   why");
    const wrong = await npmBin(["promote", "x"]);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('error: unknown command "promote"');
  });

  it("prints its version and commit, the cluster's and the operator's", async () => {
    const { code, stdout } = await npmBin(["version", ...admin_()]);
    expect(code).toBe(0);
    const node = machineNode?.version ?? process.versions.node;
    expect(stdout).toContain(
      `Client: kubectl-remram ${stamp.version} (commit ${stamp.commit}, node ${node})`,
    );
    expect(stdout).toMatch(/^Kubernetes: v1\.\d+/m);
    expect(stdout).toContain(`Operator: 9.9.9-${suffix} (${namespace}/remram-operator`);
  });

  it("completes names from the cluster: through kubectl, its own completion helper and the bash script", async () => {
    const path = `${join(installDir, "node_modules/.bin")}:${systemPath}`;
    const viaKubectl = await exec(
      binPath("kubectl"),
      ["__complete", "remram", "approve", "--kubeconfig", kubernetes.kubeconfig, "-n", namespace, ""],
      path,
    );
    expect(viaKubectl.stdout).toBe("box-p-1\tPending\nbox-p-3\tPending\n:4\n");
    const helper = await exec(
      join(installDir, "node_modules/.bin/kubectl_complete-remram"),
      ["status", ...admin_(), "b"],
      path,
    );
    expect(helper.stdout).toBe("box\tReady=True\n:4\n");
    const script = await npmBin(["completion", "bash"]);
    const words = ["kubectl-remram", "diff", ...admin_(), "box-p-"];
    const bash = await exec(
      "/bin/bash",
      [
        "-c",
        `source /dev/stdin <<'EOF'\n${script.stdout}EOF\nCOMP_WORDS=(${words.map((word) => `'${word}'`).join(" ")}); COMP_CWORD=${words.length - 1}; _kubectl_remram; printf '%s\\n' "\${COMPREPLY[@]}"`,
      ],
      path,
    );
    expect(bash.stdout.trim().split("\n")).toEqual(["box-p-1", "box-p-2", "box-p-3"]);
  });

  it("summarizes an appliance, and names the ones there are for an unknown name", async () => {
    const status = await npmBin(["status", "box", ...admin_()]);
    expect(status.stdout).toContain("box: Ready=True (Available), profile cpu-only");
    expect(status.stdout).toContain(`cortex → http://box-cortex.${namespace}.svc:8080`);
    const unknown = await npmBin(["status", "boxx", ...admin_()]);
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toBe(
      `error: no RemramAppliance "boxx" in namespace ${namespace}; there is: box (Ready=True)\n`,
    );
  });

  it("approves a Pending proposal as an approver, and says so when it is decided or not Pending", async () => {
    const user = `system:serviceaccount:${namespace}:approver`;
    const args = (name: string) => [
      "approve",
      name,
      "--kubeconfig",
      fixtures.approver,
      "--comment",
      "as agreed",
    ];
    const approved = await npmBin(args("box-p-1"));
    expect(approved).toMatchObject({ code: 0, stderr: "" });
    expect(approved.stdout).toBe(
      `artifactproposal/box-p-1 approved by ${user}; the operator promotes it now\n`,
    );
    expect((await proposalStatus("box-p-1"))?.approval).toMatchObject({
      decision: "Approved",
      by: user,
      comment: "as agreed",
    });
    const again = await npmBin(args("box-p-1"));
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(
      new RegExp(`^error: box-p-1 was already approved by ${user} at .*; a decision is final\n$`),
    );
    const failed = await npmBin(args("box-p-2"));
    expect(failed.stderr).toBe(
      "error: box-p-2 is Failed, not Pending (ApprovalStale: the spec changed after the decision); only a Pending proposal can be approved or denied\n",
    );
    const unknown = await npmBin(args("box-p-9"));
    expect(unknown.stderr).toMatch(
      /^error: no ArtifactProposal "box-p-9" in namespace \S+; there are: box-p-1 \(Pending\), box-p-2 \(Failed\), box-p-3 \(Pending\)\n$/,
    );
  });

  it("names the missing permission and the ClusterRole that grants it to a user without RBAC", async () => {
    const nobody = await npmBin(["approve", "box-p-3", "--kubeconfig", fixtures.nobody]);
    expect(nobody.code).toBe(1);
    expect(nobody.stderr).toContain(
      `error: forbidden: system:serviceaccount:${namespace}:nobody may not get artifactproposals (API group remram.io) in namespace ${namespace}.`,
    );
    expect(nobody.stderr).toContain("the chart's remram-approver ClusterRole grants them");
    expect(nobody.stderr).toContain(
      `--clusterrole=remram-approver --serviceaccount=${namespace}:nobody -n ${namespace}`,
    );
    const viewer = await npmBin(["approve", "box-p-3", "--kubeconfig", fixtures.viewer]);
    expect(viewer.stderr).toContain(
      `error: forbidden: system:serviceaccount:${namespace}:viewer may not approve artifactproposals (API group remram.io)`,
    );
    expect((await proposalStatus("box-p-3"))?.approval).toBeUndefined();
    const dream = await npmBin(["dream", "now", "nightly", "--kubeconfig", fixtures.approver]);
    expect(dream.stderr).toContain("may not patch dreamschedules");
    expect(dream.stderr).toContain("kubectl create role remram-dreamer");
  });

  it("says what an export lacks: the right to Cortex's credential, the credential, a ready Cortex pod", async () => {
    const approver = await npmBin(["export", "alice", "--kubeconfig", fixtures.approver]);
    expect(approver.code).toBe(1);
    expect(approver.stderr).toContain(
      `error: forbidden: system:serviceaccount:${namespace}:approver may not get secrets in namespace ${namespace}.`,
    );
    expect(approver.stderr).toContain("create on pods/portforward");
    const noSecret = await npmBin(["export", "alice", ...admin_()]);
    expect(noSecret.stderr).toBe(
      `error: the Secret box-cortex-admin with Cortex's admin credential is not in namespace ${namespace}: is the appliance reconciled?\n`,
    );
    await admin.create(`/api/v1/namespaces/${namespace}/secrets`, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "box-cortex-admin", namespace },
      stringData: { token: "an-admin-credential-for-the-test" },
    });
    // The kwok appliance has no pods at all: nothing to forward a port to.
    const noPod = await npmBin(["export", "alice", "--appliance", "box", ...admin_()]);
    expect(noPod.stderr).toBe(
      `error: no ready Cortex pod for appliance box in namespace ${namespace} (none at all: is the appliance reconciled? kubectl remram status)\n`,
    );
    expect(noPod.stderr).not.toContain("an-admin-credential-for-the-test");
    const unknown = await npmBin(["export", "alice", "--appliance", "boxx", ...admin_()]);
    expect(unknown.stderr).toBe(
      `error: no RemramAppliance "boxx" in namespace ${namespace}; there is: box (Ready=True)\n`,
    );
    // check goes the same way to Cortex, and names its own verb in what to grant.
    const check = await npmBin(["check", "--kubeconfig", fixtures.approver]);
    expect(check.code).toBe(1);
    expect(check.stderr).toContain(`may not get secrets in namespace ${namespace}.`);
    expect(check.stderr).toContain("kubectl remram check reads Cortex's admin credential");
    const checkNoPod = await npmBin(["check", ...admin_()]);
    expect(checkNoPod.stderr).toBe(
      `error: no ready Cortex pod for appliance box in namespace ${namespace} (none at all: is the appliance reconciled? kubectl remram status)\n`,
    );
  });

  it("shows a diff and asks for a dream", async () => {
    const diff = await npmBin(["diff", "box-p-3", ...admin_()]);
    expect(diff.stdout).toBe(
      "# notes/house.md  (repeated in three sessions)\n+ the boiler is serviced in May\n",
    );
    const dream = await npmBin(["dream", "now", "nightly", ...admin_()]);
    expect(dream.stdout).toMatch(/^dreamschedule\/nightly: a cycle was requested at \S+Z\n$/);
  });

  it("says which server it cannot reach, and that there is no kubeconfig", async () => {
    const refused = await npmBin(["status", "--kubeconfig", closedPort]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(
      /^error: cannot reach the API server at https:\/\/127\.0\.0\.1:\d+: connection refused\./,
    );
    const none = await npmBin(["status"]);
    expect(none.stderr).toBe(
      `error: no kubeconfig: $KUBECONFIG is not set and ${home}/.kube/config does not exist. Pass --kubeconfig FILE or set KUBECONFIG (on a k3s box the admin's is /etc/rancher/k3s/k3s.yaml).\n`,
    );
  });
});

describe("the krew archive's single executable, with no Node on PATH", () => {
  it("answers --help and its version", async () => {
    expect(await seaBin(["--help"])).toMatchObject({ code: 0, stderr: "" });
    expect((await seaBin(["version", "--client"])).stdout).toBe(
      `Client: kubectl-remram ${stamp.version} (commit ${stamp.commit}, built-in node ${process.versions.node})\n`,
    );
  });

  it("reads and decides through the API server, and completes through its helper", async () => {
    expect((await seaBin(["status", ...admin_()])).stdout).toContain("box: Ready=True (Available)");
    const denied = await seaBin(["deny", "box-p-3", "--kubeconfig", fixtures.approver]);
    expect(denied.stdout).toBe(
      `artifactproposal/box-p-3 denied by system:serviceaccount:${namespace}:approver; the operator tells Cortex\n`,
    );
    const helper = await exec(
      join(krewDir, "kubectl_complete-remram"),
      ["dream", "now", ...admin_(), ""],
      `${krewDir}:/usr/bin:/bin`,
    );
    expect(helper.stdout).toBe("nightly\n:4\n");
  });
});
