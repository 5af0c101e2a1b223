import { describe, expect, it } from "vitest";
import { KubeApiError } from "../runtime/kube-client.js";
import type { Command } from "./commands.js";
import {
  CliError,
  contextProblem,
  explain,
  kubeconfigProblem,
  missingPermission,
  notInstalled,
  parseForbidden,
  unknownName,
} from "./errors.js";

const approve: Command = { verb: "approve", name: "box-p-1" };
const context = { command: approve, namespace: "home", server: "https://10.0.0.2:6443", contextName: "box" };
const forbiddenGet =
  'artifactproposals.remram.io "box-p-1" is forbidden: User "system:serviceaccount:home:carol" cannot get resource "artifactproposals" in API group "remram.io" in the namespace "home"';

describe("a refusal for want of RBAC", () => {
  it("is parsed from the API server's message", () => {
    expect(parseForbidden(forbiddenGet)).toEqual({
      user: "system:serviceaccount:home:carol",
      verb: "get",
      resource: "artifactproposals",
      group: "remram.io",
      namespace: "home",
    });
    expect(
      parseForbidden('nodes is forbidden: User "bob" cannot list resource "nodes" in API group ""'),
    ).toEqual({
      user: "bob",
      verb: "list",
      resource: "nodes",
      group: "",
    });
  });

  it("names the missing verb and resource, and the ClusterRole and binding that grant it", () => {
    const text = explain(new KubeApiError(403, "Forbidden", forbiddenGet), context);
    expect(text).toContain(
      "forbidden: system:serviceaccount:home:carol may not get artifactproposals (API group remram.io) in namespace home.",
    );
    expect(text).toContain("the chart's remram-approver ClusterRole grants them");
    expect(text).toContain(
      "kubectl create rolebinding remram-approver-system-serviceaccount-home-carol --clusterrole=remram-approver --serviceaccount=home:carol -n home",
    );
  });

  it("says that no chart role lets people ask for a dream", () => {
    const text = explain(new KubeApiError(403, "Forbidden", forbiddenGet.replaceAll("get", "patch")), {
      ...context,
      command: { verb: "dream-now", name: "nightly" },
    });
    expect(text).toContain("no ClusterRole of the chart grants to people");
    expect(text).toContain(
      "kubectl create role remram-dreamer --verb=get,patch --resource=dreamschedules.remram.io",
    );
  });

  it("says what managing household credentials takes, and how a cluster admin grants it", () => {
    const denied =
      'serviceaccounts is forbidden: User "system:serviceaccount:home:box-member-alice" cannot create resource "serviceaccounts" in API group "" in the namespace "home"';
    const text = explain(new KubeApiError(403, "Forbidden", denied), {
      ...context,
      command: { verb: "user", action: "remove", member: "bob" },
    });
    expect(text).toMatch(
      /^forbidden: system:serviceaccount:home:box-member-alice may not create serviceaccounts in namespace home\.\n/,
    );
    expect(text).toContain("create on serviceaccounts/token");
    expect(text).toContain(
      "bind on the ClusterRoles remram-member, remram-approver and remram-household-admin",
    );
    expect(text).toContain(
      "kubectl create rolebinding remram-admin-system-serviceaccount-home-box-member-alice --clusterrole=admin --serviceaccount=home:box-member-alice -n home",
    );
    expect(text).toContain(
      "kubectl create rolebinding remram-household-binder-system-serviceaccount-home-box-member-alice --clusterrole=remram-household-binder",
    );
  });

  it("passes the approval policy's own reason on", () => {
    const message =
      "artifactproposals.remram.io \"p\" is forbidden: ValidatingAdmissionPolicy 'remram-approval' with binding 'remram-approval' denied request: the proposer cannot approve or deny their own proposal";
    expect(explain(new KubeApiError(403, "Forbidden", message), context)).toBe(
      "refused by the admission policy remram-approval: the proposer cannot approve or deny their own proposal",
    );
  });

  it("is also what an access review's no reads as", () => {
    expect(
      missingPermission("alice", { verb: "approve", resource: "artifactproposals" }, approve, "home"),
    ).toMatch(
      /^forbidden: alice may not approve artifactproposals \(API group remram.io\) in namespace home\.\n/,
    );
  });
});

describe("a cluster that cannot be reached", () => {
  const failure = (code: string) => Object.assign(new Error(`connect ${code}`), { code });

  it("names the server, the cause and where to look", () => {
    const refused = explain(failure("ECONNREFUSED"), context);
    expect(refused).toMatch(/^cannot reach the API server at https:\/\/10.0.0.2:6443: connection refused/);
    expect(refused).toContain('kubectl config view --minify (context "box"; --context picks another)');
    expect(explain(failure("ENOTFOUND"), context)).toContain("its host name does not resolve");
    expect(explain(failure("EHOSTUNREACH"), context)).toContain("no answer (EHOSTUNREACH)");
    expect(explain(new Error("request to /version timed out"), context)).toContain("no answer (timed out)");
    expect(explain(failure("DEPTH_ZERO_SELF_SIGNED_CERT"), context)).toContain("does not trust");
    // Other codes are not about the network: an exec credential plugin that is not installed, say.
    expect(explain(failure("ENOENT"), context)).toBe("connect ENOENT");
  });

  it("says so when there is no kubeconfig at all, or the file or context named does not exist", () => {
    const facts = {
      home: "/home/a",
      inCluster: false,
      delimiter: ":",
      exists: (path: string) => path === "/k/ok",
    };
    expect(kubeconfigProblem(facts)).toMatch(
      /^no kubeconfig: \$KUBECONFIG is not set and \/home\/a\/.kube\/config/,
    );
    expect(kubeconfigProblem({ ...facts, inCluster: true })).toBeUndefined();
    expect(kubeconfigProblem({ ...facts, flag: "/k/missing" })).toBe(
      "the kubeconfig /k/missing (--kubeconfig) does not exist",
    );
    expect(kubeconfigProblem({ ...facts, env: "/k/a:/k/b" })).toMatch(
      /none of the files in \$KUBECONFIG exists/,
    );
    expect(kubeconfigProblem({ ...facts, env: "/k/a:/k/ok" })).toBeUndefined();
    expect(contextProblem("lab", "box", ["box"])).toBe('no context "lab" in the kubeconfig; it has: box');
    expect(contextProblem(undefined, "", ["box", "lab"])).toMatch(
      /no current context; pick one with --context/,
    );
    expect(contextProblem(undefined, "box", ["box"])).toBeUndefined();
  });

  it("reads an expired token as such", () => {
    expect(explain(new KubeApiError(401, "Unauthorized", "Unauthorized"), context)).toContain(
      "did not accept your credentials (401 Unauthorized)",
    );
  });
});

describe("an unknown name", () => {
  it("lists what exists instead", () => {
    expect(
      unknownName("ArtifactProposal", "nope", "home", [
        { name: "box-p-1", detail: "Pending" },
        { name: "box-p-2", detail: "Promoted" },
      ]),
    ).toBe('no ArtifactProposal "nope" in namespace home; there are: box-p-1 (Pending), box-p-2 (Promoted)');
    expect(unknownName("DreamSchedule", "n", "home", [])).toBe(
      'no DreamSchedule "n" in namespace home; there is none there (another namespace? -n NAMESPACE)',
    );
    expect(unknownName("RemramAppliance", "x", "home", undefined)).toBe(
      'no RemramAppliance "x" in namespace home',
    );
    const many = Array.from({ length: 23 }, (_, index) => ({ name: `p${index}` }));
    expect(unknownName("ArtifactProposal", "x", "home", many)).toMatch(/p19, and 3 more$/);
  });

  it("says when the cluster does not know the kind at all", () => {
    expect(notInstalled("artifactproposals")).toMatch(
      /^this cluster does not serve artifactproposals.remram.io: the Remram CRDs are not installed/,
    );
  });

  it("and a message already meant for the user passes through", () => {
    expect(explain(new CliError("as it is"), context)).toBe("as it is");
  });
});
