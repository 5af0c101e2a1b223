import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { parseInvocation, UsageError } from "./commands.js";
import { formatUserList, memberRows } from "./user-list.js";
import {
  bindingIsCurrent,
  defaultDurationSeconds,
  escalationMessage,
  formatAddNotice,
  formatDuration,
  formatMissing,
  isEscalationRefusal,
  isMembersObject,
  memberIdProblem,
  memberKubeconfig,
  memberRoleBinding,
  memberServiceAccount,
  notAMember,
  parseDuration,
  planBindings,
} from "./users.js";

const user = (...words: string[]) => parseInvocation(["user", ...words]).command;

describe("kubectl remram user arguments", () => {
  it("parse add with its flags, a token for 30 days by default", () => {
    expect(user("add", "alice")).toEqual({
      verb: "user",
      action: "add",
      member: "alice",
      approver: false,
      admin: false,
      durationSeconds: defaultDurationSeconds,
      output: "token",
    });
    expect(defaultDurationSeconds).toBe(720 * 3600);
    expect(
      parseInvocation([
        "user",
        "add",
        "bob",
        "--appliance=box",
        "--approver",
        "--admin",
        "--duration",
        "24h",
        "-o",
        "kubeconfig",
        "-n",
        "home",
      ]),
    ).toEqual({
      command: {
        verb: "user",
        action: "add",
        member: "bob",
        appliance: "box",
        approver: true,
        admin: true,
        durationSeconds: 86_400,
        output: "kubeconfig",
      },
      connection: { namespace: "home" },
    });
  });

  it("parse list and remove, which take only --appliance", () => {
    expect(user("list")).toEqual({ verb: "user", action: "list" });
    expect(user("list", "--appliance", "box")).toEqual({ verb: "user", action: "list", appliance: "box" });
    expect(user("remove", "alice")).toEqual({ verb: "user", action: "remove", member: "alice" });
    expect(() => user("remove", "alice", "--approver")).toThrow("--approver applies to user add only");
    expect(() => user("list", "-o", "json")).toThrow("--output applies to user add only");
    expect(() => user("list", "alice")).toThrow("user list takes no arguments; got alice");
  });

  it("explain a missing or unknown action, member or value, with the user verb's usage", () => {
    expect(() => user()).toThrow(new UsageError("user needs what to do: add, list, remove", "user"));
    expect(() => user("grant", "alice")).toThrow("user takes add, list, remove; got grant");
    expect(() => user("add")).toThrow("user add needs the member id (spec.household.members[].id)");
    expect(() => user("add", "alice", "bob")).toThrow("user add takes one member id; got alice bob");
    expect(() => user("add", "Alice")).toThrow(/"Alice" is not a household member id/);
    expect(() => user("add", "a_b")).toThrow(/member id "a_b" cannot be part of a ServiceAccount name/);
    expect(() => user("add", "alice", "-o", "json")).toThrow('-o takes token or kubeconfig, not "json"');
    expect(() => user("add", "alice", "--appliance=")).toThrow("--appliance needs a value");
    expect(() => user("add", "alice", "--duration", "soon")).toThrow(/--duration takes a duration/);
    expect(() => user("add", "alice", "--duration")).toThrow("--duration needs a value");
    expect(() => parseInvocation(["status", "--admin"])).toThrow("--admin does not apply to status");
    expect(() => user()).toThrow(expect.objectContaining({ topic: "user" }));
  });
});

describe("token durations", () => {
  it("read Go's units and days, summed, in whole seconds", () => {
    expect(parseDuration("720h")).toBe(2_592_000);
    expect(parseDuration("30d")).toBe(2_592_000);
    expect(parseDuration("1h30m")).toBe(5_400);
    expect(parseDuration("1.5h")).toBe(5_400);
    expect(parseDuration("600s")).toBe(600);
    expect(parseDuration("10m")).toBe(600);
  });

  it("refuse under 10 minutes (the API server would) and over a year (a person's credential)", () => {
    expect(() => parseDuration("9m")).toThrow("--duration must be at least 10m");
    expect(parseDuration("366d")).toBe(366 * 86_400);
    expect(() => parseDuration("367d")).toThrow("--duration must be at most 366d");
    for (const text of ["", "720", "h", "1ms", "-1h", "1 h", "1w"])
      expect(() => parseDuration(text), text).toThrow(/takes a duration such as/);
  });

  it("are shown back in their largest whole unit", () => {
    expect(formatDuration(2_592_000)).toBe("30d");
    expect(formatDuration(129_600)).toBe("36h");
    expect(formatDuration(5_400)).toBe("90m");
    expect(formatDuration(601)).toBe("601s");
  });
});

describe("member ids", () => {
  it("accept what a ServiceAccount name and a label value can carry", () => {
    for (const id of ["alice", "a", "bob-2", "m.smith", "x9"])
      expect(memberIdProblem(id), id).toBeUndefined();
  });

  it("refuse ids the CRD would not hold, and ones it holds that no name can carry", () => {
    expect(memberIdProblem("9lives")).toMatch(/not a household member id/);
    expect(memberIdProblem("a".repeat(64))).toMatch(/not a household member id/);
    for (const id of ["a_b", "alice-", "alice.", "a..b", "a.-b"])
      expect(memberIdProblem(id), id).toMatch(/cannot be part of a ServiceAccount name/);
  });

  it("not in the household are refused with the members there are", () => {
    expect(notAMember("carol", "box", ["alice", "bob"])).toBe(
      "carol is not a member of RemramAppliance box: its members are alice, bob. Add the person to spec.household.members first",
    );
    expect(notAMember("carol", "box", [])).toContain("it has no spec.household.members");
  });
});

describe("the objects of a member's credential", () => {
  const labels = {
    "app.kubernetes.io/instance": "box",
    "app.kubernetes.io/managed-by": "kubectl-remram",
    "remram.io/member": "alice",
  };

  it("are a ServiceAccount <appliance>-member-<id> with the appliance's and the member's labels", () => {
    expect(memberServiceAccount("home", "box", "alice")).toEqual({
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "box-member-alice", namespace: "home", labels },
    });
    expect(isMembersObject({ metadata: { name: "box-member-alice", labels } }, "box", "alice")).toBe(true);
    expect(isMembersObject({ metadata: { name: "box-member-alice" } }, "box", "alice")).toBe(false);
    expect(isMembersObject({ metadata: { name: "box-member-alice", labels } }, "box", "bob")).toBe(false);
  });

  it("and RoleBindings <account>-<grant> to the chart's ClusterRoles, owned by the account", () => {
    expect(memberRoleBinding("home", "box", "alice", "admin", "uid-1")).toEqual({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: {
        name: "box-member-alice-admin",
        namespace: "home",
        labels,
        ownerReferences: [
          { apiVersion: "v1", kind: "ServiceAccount", name: "box-member-alice", uid: "uid-1" },
        ],
      },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "remram-household-admin" },
      subjects: [{ kind: "ServiceAccount", name: "box-member-alice", namespace: "home" }],
    });
    expect(memberRoleBinding("home", "box", "alice", "member", "u").roleRef.name).toBe("remram-member");
    expect(memberRoleBinding("home", "box", "alice", "approver", "u").roleRef.name).toBe("remram-approver");
  });

  it("count an existing binding as current only with the same role, subject and owning account", () => {
    const wanted = memberRoleBinding("home", "box", "alice", "approver", "uid-1");
    expect(bindingIsCurrent(wanted, wanted)).toBe(true);
    expect(bindingIsCurrent(memberRoleBinding("home", "box", "alice", "approver", "uid-0"), wanted)).toBe(
      false,
    );
    expect(bindingIsCurrent({ ...wanted, roleRef: { ...wanted.roleRef, name: "admin" } }, wanted)).toBe(
      false,
    );
    expect(
      bindingIsCurrent(
        { ...wanted, subjects: [...wanted.subjects, { kind: "User", name: "mallory" }] },
        wanted,
      ),
    ).toBe(false);
  });

  it("are made to match the flags given: what is not asked for is deleted", () => {
    expect(planBindings({}, ["member", "approver"])).toEqual({ member: "create", approver: "create" });
    expect(planBindings({ member: true, approver: true }, ["member"])).toEqual({
      member: "keep",
      approver: "delete",
    });
    expect(planBindings({ member: false, admin: true }, ["member", "admin"])).toEqual({
      member: "replace",
      admin: "keep",
    });
  });
});

describe("what user add says", () => {
  it("names each object and what became of it, and when the token ends, never the token", () => {
    const text = formatAddNotice({
      namespace: "home",
      member: "alice",
      account: "box-member-alice",
      accountCreated: false,
      plan: { member: "keep", approver: "delete", admin: "create" },
      expiresAt: "2026-02-01T00:00:00Z",
      durationSeconds: 720 * 3600,
    });
    expect(text.split("\n")).toEqual([
      "serviceaccount/box-member-alice kept in namespace home: alice signs in as system:serviceaccount:home:box-member-alice",
      "rolebinding/box-member-alice-member kept (ClusterRole remram-member)",
      "rolebinding/box-member-alice-approver deleted (ClusterRole remram-approver): --approver was not given",
      "rolebinding/box-member-alice-admin created (ClusterRole remram-household-admin)",
      "a token for alice, valid until 2026-02-01T00:00:00Z; `kubectl remram user remove alice` revokes it and every other token of alice's",
    ]);
  });

  it("groups what a pre-check found missing by resource", () => {
    expect(
      formatMissing([
        { verb: "get", resource: "serviceaccounts" },
        { verb: "create", resource: "serviceaccounts" },
        { verb: "create", resource: "serviceaccounts", subresource: "token" },
        { verb: "get", resource: "rolebindings" },
        { verb: "create", resource: "rolebindings" },
        { verb: "delete", resource: "rolebindings" },
      ]),
    ).toBe(
      "get and create on serviceaccounts, create on serviceaccounts/token, get, create and delete on rolebindings",
    );
  });

  it("turns RBAC's escalation refusal into the role that could not be bound", () => {
    expect(
      isEscalationRefusal(
        'rolebindings.rbac.authorization.k8s.io "box-member-bob-admin" is forbidden: user "carol" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:["remram.io"], Resources:["remramappliances"], Verbs:["administer"]}',
      ),
    ).toBe(true);
    expect(escalationMessage("carol", "admin", "home")).toBe(
      "forbidden: carol may not bind the ClusterRole remram-household-admin in namespace home: Kubernetes lets you bind only a role whose permissions you hold yourself, or one you have the bind verb on (clusterroles/remram-household-admin).",
    );
  });
});

describe("a member's kubeconfig", () => {
  it("has the caller's server and CA, the member's token and the namespace", () => {
    const text = memberKubeconfig(
      { name: "k3s", server: "https://10.0.0.2:6443", caData: "Q0E=", tlsServerName: "box.local" },
      "home",
      "box-member-alice",
      "eyJtoken",
    );
    expect(load(text)).toEqual({
      apiVersion: "v1",
      kind: "Config",
      clusters: [
        {
          name: "k3s",
          cluster: {
            server: "https://10.0.0.2:6443",
            "certificate-authority-data": "Q0E=",
            "tls-server-name": "box.local",
          },
        },
      ],
      users: [{ name: "box-member-alice", user: { token: "eyJtoken" } }],
      contexts: [
        {
          name: "box-member-alice",
          context: { cluster: "k3s", user: "box-member-alice", namespace: "home" },
        },
      ],
      "current-context": "box-member-alice",
    });
    const insecure = load(
      memberKubeconfig({ name: "t", server: "https://x", skipTLSVerify: true }, "home", "a", "t"),
    ) as { clusters: { cluster: Record<string, unknown> }[] };
    expect(insecure.clusters[0]?.cluster).toEqual({ server: "https://x", "insecure-skip-tls-verify": true });
  });
});

describe("user list", () => {
  const account = (member: string) => ({
    metadata: { name: `box-member-${member}`, labels: { "remram.io/member": member } },
  });
  const binding = (member: string, grant: string, role: string) => ({
    metadata: { name: `box-member-${member}-${grant}`, labels: { "remram.io/member": member } },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  });

  it("shows every member, the account and bindings each has, and accounts of former members", () => {
    const rows = memberRows(
      "box",
      ["alice", "bob", "dan"],
      [account("alice"), account("bob"), account("carol")],
      [
        binding("alice", "member", "remram-member"),
        binding("alice", "approver", "remram-approver"),
        binding("bob", "member", "remram-member"),
        binding("bob", "admin", "remram-household-admin"),
        binding("carol", "member", "remram-member"),
      ],
    );
    expect(rows).toEqual([
      { member: "alice", inHousehold: true, account: "box-member-alice", grants: ["member", "approver"] },
      { member: "bob", inHousehold: true, account: "box-member-bob", grants: ["member", "admin"] },
      { member: "dan", inHousehold: true, grants: [] },
      { member: "carol", inHousehold: false, account: "box-member-carol", grants: ["member"] },
    ]);
    expect(formatUserList("box", "home", rows).split("\n")).toEqual([
      "MEMBER  SERVICEACCOUNT    BINDINGS",
      "alice   box-member-alice  member,approver",
      "bob     box-member-bob    member,admin",
      "dan     -                 -",
      "carol   box-member-carol  member  (not in spec.household: kubectl remram user remove carol)",
    ]);
    expect(formatUserList("box", "home", [])).toBe(
      "RemramAppliance box in home has no spec.household.members",
    );
  });
});
