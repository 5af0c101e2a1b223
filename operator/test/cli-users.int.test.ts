// REMRAM_TESTBED=kubernetes: `kubectl remram user add|list|remove` against the real API server, run in this
// process through the plugin's main() with the test bed's admin kubeconfig. The chart's own ClusterRoles (rendered
// by Helm from its templates) are bound; what a member's token may do is asked with that token
// (SelfSubjectAccessReview, as remram-app does) and whether it still signs in with TokenReview.
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { KubeClient, type KubeObject } from "../src/runtime/kube-client.js";
import { type AppliedRoles, applyChartRoles, clusterRolesPath as clusterRoles } from "./chart-roles.js";
import { type CliResult, runCli } from "./cli-main.js";
import { adminClient, createNamespace, installCrds, runSuffix } from "./cluster.js";

const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const { client: admin } = adminClient();
const suffix = runSuffix();
const namespace = `cli-users-${suffix}`;
const scratch = mkdtempSync(join(tmpdir(), "cli-users-"));
const account = (member: string) => `box-member-${member}`;
const username = (member: string) => `system:serviceaccount:${namespace}:${account(member)}`;
/** The chart's ClusterRoles; those this suite applied because they were not there are removed afterwards. */
let appliedRoles: AppliedRoles | undefined;

/** kubectl-remram's main() with `args`, its stdout and stderr captured. */
const cli = (args: string[], kubeconfig = kubernetes.kubeconfig): Promise<CliResult> =>
  runCli([...args, "--kubeconfig", kubeconfig, "-n", namespace]);

const clientWithToken = (token: string): KubeClient => {
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [{ name: "testbed", server: kubernetes.server, skipTLSVerify: true }],
    users: [{ name: "member", token }],
    contexts: [{ name: "testbed", cluster: "testbed", user: "member" }],
    currentContext: "testbed",
  });
  return new KubeClient(config);
};

/** What TokenReview says of `token`: its username when it authenticates. */
async function reviewToken(token: string): Promise<string | undefined> {
  const review = await admin.create<{ status?: { authenticated?: boolean; user?: { username?: string } } }>(
    "/apis/authentication.k8s.io/v1/tokenreviews",
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } },
  );
  return review.status?.authenticated === true ? review.status.user?.username : undefined;
}

/** A SelfSubjectAccessReview made with the member's own client, as remram-app asks. */
async function may(client: KubeClient, verb: string, resource: string, name?: string): Promise<boolean> {
  const review = await client.create<{ status?: { allowed?: boolean } }>(
    "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
    {
      apiVersion: "authorization.k8s.io/v1",
      kind: "SelfSubjectAccessReview",
      spec: {
        resourceAttributes: { group: "remram.io", resource, verb, namespace, ...(name ? { name } : {}) },
      },
    },
  );
  return review.status?.allowed === true;
}

/** RBAC's authorizer reads bindings from a cache: wait until the answer is the expected one. */
const until = (what: string, check: () => Promise<boolean>, timeoutMs = 10_000) =>
  waitFor(async () => ((await check()) ? true : undefined), { what, timeoutMs, intervalMs: 200 });

beforeAll(async () => {
  await installCrds(admin);
  await createNamespace(admin, namespace);
  appliedRoles = await applyChartRoles(admin, "remram-cli-users-test");
  await admin.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: { household: { id: "home", members: [{ id: "alice" }, { id: "bob" }] } },
  });
}, 60_000);

afterAll(async () => {
  await admin.delete(`/api/v1/namespaces/${namespace}`);
  await appliedRoles?.remove();
  await admin.delete(`${clusterRoles}/remram-household-binder`);
  rmSync(scratch, { recursive: true, force: true });
});

describe("kubectl remram user", () => {
  let aliceToken = "";
  let aliceKubeconfig = "";

  it("adds alice as an approver: a token alone on stdout that signs in as her account and may approve", async () => {
    const added = await cli(["user", "add", "alice", "--approver"]);
    expect(added.stderr).toContain(
      `serviceaccount/box-member-alice created in namespace ${namespace}: alice signs in as ${username("alice")}`,
    );
    expect(added.stderr).toContain("rolebinding/box-member-alice-member created (ClusterRole remram-member)");
    expect(added.stderr).toContain(
      "rolebinding/box-member-alice-approver created (ClusterRole remram-approver)",
    );
    expect(added.code).toBe(0);
    aliceToken = added.stdout.trim();
    expect(added.stdout).toBe(`${aliceToken}\n`);
    expect(added.stderr).not.toContain(aliceToken);
    expect(await reviewToken(aliceToken)).toBe(username("alice"));

    const serviceAccount = await admin.get<KubeObject>(
      `/api/v1/namespaces/${namespace}/serviceaccounts/box-member-alice`,
    );
    expect(serviceAccount?.metadata.labels).toMatchObject({
      "app.kubernetes.io/instance": "box",
      "app.kubernetes.io/managed-by": "kubectl-remram",
      "remram.io/member": "alice",
    });
    const alice = clientWithToken(aliceToken);
    await until("alice may approve", () => may(alice, "approve", "artifactproposals"));
    expect(await may(alice, "list", "artifactproposals")).toBe(true);
    expect(await may(alice, "administer", "remramappliances", "box")).toBe(false);
  });

  it("adds bob as an admin with a kubeconfig of his own, whose token may administer the appliance", async () => {
    const added = await cli(["user", "add", "bob", "--admin", "--duration", "1h", "-o", "kubeconfig"]);
    expect(added.stderr).toContain(
      "rolebinding/box-member-bob-admin created (ClusterRole remram-household-admin)",
    );
    expect(added.code).toBe(0);
    const config = new KubeConfig();
    config.loadFromString(added.stdout);
    expect(config.getContextObject(config.getCurrentContext())?.namespace).toBe(namespace);
    expect(config.getCurrentCluster()?.server).toBe(kubernetes.server);
    const bob = new KubeClient(config);
    await until("bob may administer box", () => may(bob, "administer", "remramappliances", "box"));
    expect(await may(bob, "approve", "artifactproposals")).toBe(false);
    const token = config.getCurrentUser()?.token ?? "";
    expect(await reviewToken(token)).toBe(username("bob"));
  });

  it("refuses someone who is not in the household, naming the members", async () => {
    const refused = await cli(["user", "add", "carol"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      "carol is not a member of RemramAppliance box: its members are alice, bob. Add the person to spec.household.members first",
    );
    expect(
      await admin.get(`/api/v1/namespaces/${namespace}/serviceaccounts/box-member-carol`),
    ).toBeUndefined();
  });

  it("makes alice's bindings match a later add without --approver, and her earlier token stays hers", async () => {
    const again = await cli(["user", "add", "alice", "-o", "kubeconfig"]);
    expect(again.code).toBe(0);
    expect(again.stderr).toContain(`serviceaccount/box-member-alice kept in namespace ${namespace}`);
    expect(again.stderr).toContain("rolebinding/box-member-alice-member kept");
    expect(again.stderr).toContain(
      "rolebinding/box-member-alice-approver deleted (ClusterRole remram-approver): --approver was not given",
    );
    aliceKubeconfig = join(scratch, "alice.kubeconfig");
    writeFileSync(aliceKubeconfig, again.stdout, { mode: 0o600 });
    const alice = clientWithToken(aliceToken);
    await until(
      "alice may no longer approve",
      async () => !(await may(alice, "approve", "artifactproposals")),
    );
    expect(await may(alice, "get", "artifactproposals")).toBe(true);
    expect(await reviewToken(aliceToken)).toBe(username("alice"));
  });

  it("lists the members with their accounts and bindings", async () => {
    const listed = await cli(["user", "list"]);
    expect(listed.code).toBe(0);
    expect(listed.stdout.split("\n")).toEqual([
      "MEMBER  SERVICEACCOUNT    BINDINGS",
      "alice   box-member-alice  member",
      "bob     box-member-bob    member,admin",
      "",
    ]);
  });

  it("tells a member without the rights what managing credentials takes, a grant that is enough", async () => {
    const refused = await cli(["user", "add", "bob", "--appliance", "box"], aliceKubeconfig);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(
      `forbidden: ${username("alice")} may not get and create on serviceaccounts, create on serviceaccounts/token, get, create and delete on rolebindings in namespace ${namespace}.`,
    );
    expect(refused.stderr).toContain(
      `kubectl create rolebinding remram-admin-system-serviceaccount-${namespace}-box-member-alice --clusterrole=admin --serviceaccount=${namespace}:box-member-alice -n ${namespace}`,
    );
    // Refused before anything changed: bob's admin binding, which this add would have deleted, is still there.
    expect(
      await admin.get(
        `/apis/rbac.authorization.k8s.io/v1/namespaces/${namespace}/rolebindings/box-member-bob-admin`,
      ),
    ).toBeDefined();

    // The grant the hint prints, run as written by a cluster admin, is enough to hand out every role.
    const grants = refused.stderr.split("\n").filter((line) => line.startsWith("  kubectl "));
    expect(grants).toHaveLength(4);
    const kubectl = (line: string) =>
      run(binPath("kubectl"), [...line.trim().split(" ").slice(1), `--kubeconfig=${kubernetes.kubeconfig}`]);
    // admin and remram-household-admin alone: binding remram-approver is an escalation RBAC refuses.
    for (const line of grants.slice(0, 2)) await kubectl(line);
    const escalation = await waitFor(
      async () => {
        const result = await cli(
          ["user", "add", "bob", "--admin", "--approver", "--appliance", "box"],
          aliceKubeconfig,
        );
        return result.stderr.includes("may not bind") ? result : undefined;
      },
      { what: "alice's first rights in force", timeoutMs: 10_000, intervalMs: 300 },
    );
    expect(escalation.code).toBe(1);
    expect(escalation.stderr).toContain(
      `error: forbidden: ${username("alice")} may not bind the ClusterRole remram-approver in namespace ${namespace}: Kubernetes lets you bind only a role whose permissions you hold yourself, or one you have the bind verb on (clusterroles/remram-approver).`,
    );
    for (const line of grants.slice(2)) await kubectl(line);
    const granted = await waitFor(
      async () => {
        const result = await cli(
          ["user", "add", "bob", "--admin", "--approver", "--appliance", "box"],
          aliceKubeconfig,
        );
        if (result.code !== 0) throw new Error(result.stderr);
        return result;
      },
      { what: "alice's new rights in force", timeoutMs: 10_000, intervalMs: 300 },
    );
    expect(granted.stderr).toContain(
      "rolebinding/box-member-bob-approver created (ClusterRole remram-approver)",
    );
    expect(granted.stderr).toContain("rolebinding/box-member-bob-admin kept");
  });

  it("removes alice: her bindings and account go, and every token issued for her stops signing in", async () => {
    const removed = await cli(["user", "remove", "alice"]);
    expect(removed.code).toBe(0);
    expect(removed.stdout).toContain("rolebinding/box-member-alice-member deleted");
    expect(removed.stdout).toContain(
      "serviceaccount/box-member-alice deleted: every token issued for alice stops working",
    );
    // The API server caches a token's successful authentication for 10 s.
    await until(
      "alice's token no longer authenticates",
      async () => (await reviewToken(aliceToken)) === undefined,
      20_000,
    );
    const again = await cli(["user", "remove", "alice"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain(
      `alice has no credential for box in namespace ${namespace}; nothing to delete`,
    );
    expect((await cli(["user", "list"])).stdout).toContain("alice   -               -");
  });
});
