// Approvals with the admission policy gone (deleted, as an admin might by mistake, or edited away): the API server
// then takes any status patch its RBAC allows, and the operator's own checks are all that stands between a patch
// and a commit in the household's repository. The operator runs under the chart's RBAC against the real Cortex.
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import { decisionPatch, type ProposalView } from "../src/api/approval.js";
import { approvalPolicyName, operatorUsername } from "../src/api/approval-policy.js";
import { defaultOperatorNamespace, defaultOperatorServiceAccount } from "../src/api/generated-files.js";
import type { ArtifactProposalStatus } from "../src/api/v1alpha1/artifact-proposal.js";
import { KubeApiError, type KubeClient, type KubeObject } from "../src/runtime/kube-client.js";
import { adminClient, createNamespace, getStatusCondition, installCrds, runSuffix } from "./cluster.js";
import {
  chartObjects,
  cortexHeaders,
  createRbac,
  type OperatorAndCortex,
  startOperatorAndCortex,
} from "./operator-cortex.js";

const { client: admin, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `approvals-${suffix}`;
const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}`;
const operatorName = operatorUsername(defaultOperatorNamespace, defaultOperatorServiceAccount);
const authenticated = ["system:authenticated"];
/** Holds the chart's remram-approver role here. */
const alice = admin.as("alice", authenticated);
/** Holds the approver role and may create proposals: the proposer who would approve her own. */
const carol = admin.as("carol", authenticated);
/** May patch proposals' status (a tool's or a careless role's grant), but holds no `approve`. */
const mallory = admin.as("mallory", authenticated);

let testbed: OperatorAndCortex;
let rbac: string[] = [];
/** Cortex's pending proposals, one per household artifact, handed out one to a case. */
let pending: { id: string; artifactPath: string; baseDigest?: string; proposedDigest: string }[] = [];

type Proposal = KubeObject & ProposalView & { status?: ArtifactProposalStatus };

async function cortex(method: string, path: string, caller: "operator" | "gateway", body?: unknown) {
  const response = await fetch(`${testbed.cortexUrl}${path}`, {
    method,
    headers: cortexHeaders(caller),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function pendingInCortex(): Promise<string[]> {
  const listed = await cortex("GET", "/proposals?status=pending", "operator");
  return (listed.body.proposals as { id: string }[]).map((proposal) => proposal.id);
}

/** Commits in Cortex's workspace repository (none before the first promotion creates it). */
async function commits(): Promise<number> {
  return Number(
    await simpleGit(testbed.workspaceDir)
      .raw(["rev-list", "--all", "--count"])
      .catch(() => "0"),
  );
}

/** An ArtifactProposal for the next pending Cortex proposal, created by `creator`, once the operator reports it. */
async function proposalFor(name: string, creator: KubeClient, proposedBy: string): Promise<Proposal> {
  const next = pending.shift();
  if (next === undefined) throw new Error("no pending Cortex proposal left for this case");
  await creator.create(`${api}/artifactproposals`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "ArtifactProposal",
    metadata: { name, namespace },
    spec: {
      applianceRef: { name: "box" },
      proposalId: next.id,
      artifactPath: next.artifactPath,
      ...(next.baseDigest ? { baseDigest: next.baseDigest } : {}),
      proposedDigest: next.proposedDigest,
      diff: "+ from the dream",
      rationale: "reaffirmed by the household",
      proposedBy,
    },
  });
  return waitFor(
    async () => {
      const current = await admin.get<Proposal>(`${api}/artifactproposals/${name}`);
      return current?.status?.phase === "Pending" && current.status.conditions?.length ? current : undefined;
    },
    { what: `the operator's first status on ${name}`, timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** What `kubectl remram approve|deny` sends, as `as`, naming `by`: with the policy gone, the API server takes it. */
async function decide(as: KubeClient, proposal: Proposal, decision: "Approved" | "Denied", by: string) {
  const patch = decisionPatch(proposal, decision, by, new Date().toISOString().replace(/\.\d{3}Z$/, "Z"));
  await as.jsonPatch(`${api}/artifactproposals/${proposal.metadata.name}/status`, patch);
}

async function settled(name: string): Promise<Proposal> {
  return waitFor(
    async () => {
      const current = await admin.get<Proposal>(`${api}/artifactproposals/${name}`);
      return current?.status?.phase === "Pending" ? undefined : current;
    },
    { what: `the operator's verdict on ${name}`, timeoutMs: 60_000, intervalMs: 250 },
  );
}

/** Wait for the operator's Event of `reason` about proposal `name` (recorded just after its status). */
async function untilEvent(name: string, reason: string): Promise<void> {
  await waitFor(
    async () => {
      const events = await admin.get<{ items: { reason: string; regarding: { name: string } }[] }>(
        `/apis/events.k8s.io/v1/namespaces/${namespace}/events`,
      );
      return events?.items.some((event) => event.regarding.name === name && event.reason === reason)
        ? true
        : undefined;
    },
    { what: `a ${reason} Event about ${name}`, timeoutMs: 10_000, intervalMs: 250 },
  );
}

beforeAll(async () => {
  await installCrds(admin);
  await createNamespace(admin, namespace);
  testbed = await startOperatorAndCortex(admin, kubeConfig, namespace, suffix);

  // People: alice and carol hold the chart's approver role here; carol may also create proposals; mallory may only
  // patch status. The policy below is what would have stopped mallory and carol at admission.
  const approver = await chartObjects("approver-role.yaml", namespace);
  const role = (name: string, rules: unknown[]): KubeObject =>
    ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "Role",
      metadata: { name, namespace },
      rules,
    }) as KubeObject;
  const binding = (
    name: string,
    kind: "Role" | "ClusterRole",
    roleName: string,
    users: string[],
  ): KubeObject =>
    ({
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "RoleBinding",
      metadata: { name, namespace },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind, name: roleName },
      subjects: users.map((user) => ({ apiGroup: "rbac.authorization.k8s.io", kind: "User", name: user })),
    }) as KubeObject;
  rbac = await createRbac(
    admin,
    [
      ...approver,
      binding("approvers", "ClusterRole", "remram-approver", ["alice", "carol"]),
      role("proposer", [{ apiGroups: ["remram.io"], resources: ["artifactproposals"], verbs: ["create"] }]),
      binding("proposer", "Role", "proposer", ["carol"]),
      role("status-editor", [
        { apiGroups: ["remram.io"], resources: ["artifactproposals"], verbs: ["get", "list"] },
        { apiGroups: ["remram.io"], resources: ["artifactproposals/status"], verbs: ["patch"] },
      ]),
      binding("status-editor", "Role", "status-editor", ["mallory"]),
    ],
    suffix,
  );

  // One household artifact per knowledge type: four pending proposals, each real enough to commit.
  const items = (["fact", "preference", "constraint", "decision"] as const).map((type, index) => ({
    type,
    statement: `Household ${type} number ${index + 1}: the boiler is serviced every May`,
    scope: { kind: "household", ownerIds: ["home"] },
    sourceTurnIds: [`turn-${index}`],
    userDirective: true,
  }));
  const reflected = await cortex("POST", "/reflect", "gateway", {
    principal: { userId: "alice", householdId: "home", agentId: "main" },
    sessionId: "s-approvals",
    items,
  });
  expect(reflected.status, JSON.stringify(reflected.body)).toBe(200);
  const dream = await cortex("POST", "/dream", "operator", {});
  expect(dream.status, JSON.stringify(dream.body)).toBe(200);
  const listed = await cortex("GET", "/proposals?status=pending", "operator");
  pending = listed.body.proposals as typeof pending;
  expect(pending.length).toBeGreaterThanOrEqual(4);

  const policies = "/apis/admissionregistration.k8s.io/v1";
  await admin.delete(`${policies}/validatingadmissionpolicybindings/${approvalPolicyName}`);
  await admin.delete(`${policies}/validatingadmissionpolicies/${approvalPolicyName}`);
  // The API server drops a deleted policy a moment later: until then it still refuses a foreign proposedBy.
  await waitFor(
    async () => {
      try {
        await admin.create(`${api}/artifactproposals?dryRun=All`, {
          apiVersion: "remram.io/v1alpha1",
          kind: "ArtifactProposal",
          metadata: { name: "probe", namespace },
          spec: {
            applianceRef: { name: "box" },
            proposalId: "probe",
            artifactPath: "probe.md",
            proposedDigest: `sha256:${"0".repeat(64)}`,
            diff: "",
            rationale: "probe",
            proposedBy: operatorName,
          },
        });
        return true;
      } catch (error) {
        if (error instanceof KubeApiError && error.message.includes("ValidatingAdmissionPolicy"))
          return undefined;
        throw error;
      }
    },
    { what: "the admission policy out of force", timeoutMs: 30_000, intervalMs: 500 },
  );
}, 240_000);

afterAll(async () => {
  await testbed?.stop();
  for (const path of rbac) await admin.delete(path);
  await admin.delete(`/api/v1/namespaces/${namespace}`);
  // Later suites expect the committed admission policy.
  await installCrds(admin);
});

describe("with the approval admission policy deleted", () => {
  it("an approval patched in by a user without the approve verb is refused by the operator, and nothing is committed", async () => {
    const before = await commits();
    const proposal = await proposalFor("forged-approval", admin, operatorName);
    await decide(mallory, proposal, "Approved", "mallory");
    const verdict = await settled("forged-approval");
    expect(verdict.status?.phase).toBe("Failed");
    expect(verdict.status?.promotion).toBeUndefined();
    expect(getStatusCondition(verdict, "Promoted")).toMatchObject({
      status: "False",
      reason: "ApproverNotAuthorized",
    });
    expect(getStatusCondition(verdict, "Ready")?.message).toContain("mallory does not hold the approve verb");
    await untilEvent("forged-approval", "ApproverNotAuthorized");
    expect(await commits()).toBe(before);
    expect(await pendingInCortex()).toContain(proposal.spec.proposalId);
  });

  it("the proposer's approval of their own proposal is refused by the operator, and nothing is committed", async () => {
    const before = await commits();
    const proposal = await proposalFor("self-approval", carol, "carol");
    await decide(carol, proposal, "Approved", "carol");
    const verdict = await settled("self-approval");
    expect(verdict.status?.phase).toBe("Failed");
    expect(getStatusCondition(verdict, "Promoted")).toMatchObject({
      status: "False",
      reason: "ApproverIsProposer",
    });
    await untilEvent("self-approval", "ApproverIsProposer");
    expect(await commits()).toBe(before);
    expect(await pendingInCortex()).toContain(proposal.spec.proposalId);
  });

  it("a denial patched in by a user without the approve verb never reaches Cortex", async () => {
    const proposal = await proposalFor("forged-denial", admin, operatorName);
    await decide(mallory, proposal, "Denied", "mallory");
    const verdict = await settled("forged-denial");
    expect(verdict.status?.phase).toBe("Failed");
    expect(getStatusCondition(verdict, "Ready")?.reason).toBe("ApproverNotAuthorized");
    await untilEvent("forged-denial", "ApproverNotAuthorized");
    expect(await pendingInCortex()).toContain(proposal.spec.proposalId);
  });

  it("a rightful approver still promotes: one commit, naming the approver", async () => {
    const before = await commits();
    const proposal = await proposalFor("rightful", admin, operatorName);
    await decide(alice, proposal, "Approved", "alice");
    const verdict = await settled("rightful");
    expect(verdict.status?.phase, JSON.stringify(verdict.status?.conditions)).toBe("Promoted");
    expect(await commits()).toBe(before + 1);
    const latest = (await simpleGit(testbed.workspaceDir).log()).latest;
    expect(verdict.status?.promotion?.commitId).toBe(latest?.hash.slice(0, 64));
    expect(`${latest?.message}\n${latest?.body}`).toContain("approved by alice");
  });

  it("Cortex itself promotes only a pending proposal: a denied one is a 409 and commits nothing", async () => {
    const before = await commits();
    const [id] = await pendingInCortex();
    if (id === undefined) throw new Error("no pending proposal left");
    expect((await cortex("POST", `/proposals/${id}/deny`, "operator", { deniedBy: "alice" })).status).toBe(
      200,
    );
    const promoted = await cortex("POST", "/promote", "operator", { proposalId: id, approvedBy: "alice" });
    expect(promoted.status).toBe(409);
    expect(promoted.body.message).toBe(`proposal ${id} is denied: only a pending proposal can be promoted`);
    expect(await commits()).toBe(before);
  });
});
