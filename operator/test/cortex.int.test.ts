import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { KubeConfig } from "@kubernetes/client-node";
import { Decrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import type { FastifyInstance } from "fastify";
import { load } from "js-yaml";
import { pino } from "pino";
import { simpleGit } from "simple-git";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp, cortexConfig } from "../../cortex/src/index.js";
import { maturationPlugin } from "../../cortex/src/maturation.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { decisionPatch, type ProposalView } from "../src/api/approval.js";
import { defaultOperatorNamespace, defaultOperatorServiceAccount } from "../src/api/generated-files.js";
import { loadHardwareProfiles } from "../src/appliance/hardware-profiles.js";
import { secretsAttachmentName } from "../src/appliance/secrets-bundle.js";
import { defaultImages } from "../src/config.js";
import { type RunningOperator, startOperator } from "../src/operator.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import {
  adminClient,
  createNamespace,
  getStatusCondition,
  grantApprover,
  installCrds,
  runSuffix,
} from "./cluster.js";
import { operatorKubeConfig as serviceAccountKubeConfig } from "./operator-cortex.js";

const opensearch = testbedEndpoints("opensearch");
const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `cortex-${suffix}`;
/** The operator's credential (the operator reads it from the box-cortex-operator Secret) and the gateway's. */
const operatorToken = `cortex-operator-${suffix}-0123456789`;
const gatewayToken = `cortex-gateway-${suffix}-0123456789`;
const scratch = mkdtempSync(join(tmpdir(), "remram-operator-cortex-"));
const policyPath = `/apis/remram.io/v1alpha1/namespaces/${namespace}/dimensionpolicies/box`;
const workspaceDir = join(scratch, "workspace");
const gatewayHeaders = { authorization: `Bearer ${gatewayToken}`, "content-type": "application/json" };

let cortex: FastifyInstance | undefined;
let cortexUrl = "http://127.0.0.1:1";
let operator: RunningOperator;

type Policy = KubeObject & {
  status?: { appliedHash?: string; conditions?: { type: string; status: string; reason: string }[] };
};

/** The real Cortex app on the test bed's OpenSearch, on a fresh loopback port. */
async function startCortex(): Promise<void> {
  const config = cortexConfig.parse({
    opensearchUrl: opensearch.url,
    indexPrefix: `op-${suffix}`,
    credentials: { operator: operatorToken, gateway: gatewayToken },
    logLevel: "silent",
    port: 0,
    host: "127.0.0.1",
    // The appliance's backup volume, as spec.backup mounts it into the pod.
    backupDir: join(scratch, "backups"),
  });
  mkdirSync(workspaceDir, { recursive: true });
  cortex = await buildApp({
    config,
    // Dream, proposals and promotion need the workspace repository, as in the pod.
    plugins: [
      maturationPlugin({
        workspaceDir,
        archiveDir: join(scratch, "archive"),
        gitAuthor: { name: "Remram Test", email: "test@remram.invalid" },
      }),
    ],
  });
  cortexUrl = await cortex.listen({ host: "127.0.0.1", port: 0 });
}

async function policy(): Promise<Policy | undefined> {
  return client.get<Policy>(policyPath);
}

async function untilSynced(status: string, reason: string): Promise<Policy> {
  return waitFor(
    async () => {
      const current = await policy();
      const synced = getStatusCondition(current, "Synced");
      return synced?.status === status && synced.reason === reason ? current : undefined;
    },
    { what: `Synced=${status} (${reason})`, timeoutMs: 60_000, intervalMs: 250 },
  );
}

const sha256 = /^sha256:[a-f0-9]{64}$/;
let firstHash: string | undefined;

/**
 * The operator as the chart runs it: its own service account (the approval policy lets only that identity write
 * an ArtifactProposal's status), here with a token from the TokenRequest API.
 */
async function operatorKubeConfig(): Promise<KubeConfig> {
  const config = await serviceAccountKubeConfig(client, kubeConfig);
  await client.create("/apis/rbac.authorization.k8s.io/v1/clusterrolebindings", {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "ClusterRoleBinding",
    metadata: { name: `remram-operator-test-${suffix}` },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "cluster-admin" },
    subjects: [
      { kind: "ServiceAccount", name: defaultOperatorServiceAccount, namespace: defaultOperatorNamespace },
    ],
  });
  return config;
}

beforeAll(async () => {
  await installCrds(client);
  await createNamespace(client, namespace);
  await client.create(`/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    // Labelled as the operator's own, so it keeps this value instead of generating one (as after a restore).
    metadata: {
      name: "box-cortex-operator",
      namespace,
      labels: { "app.kubernetes.io/managed-by": "remram-operator" },
    },
    stringData: { token: operatorToken },
  });
  await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: { ollama: { gpu: "disabled" } },
  });
  await startCortex();
  operator = await startOperator({
    kubeConfig: await operatorKubeConfig(),
    log: pino({ level: "silent" }),
    identity: `cortex-test-${suffix}`,
    leaseNamespace: namespace,
    watchNamespaces: [namespace],
    images: defaultImages,
    profiles: loadHardwareProfiles(join(import.meta.dirname, "../../hardware-profiles")),
    probePort: 0,
    resyncMs: 60_000,
    // Checked every few seconds here, so the suite sees a damage found and a repair noticed.
    consistencyCheckMs: 3_000,
    // Outside the cluster the operator reaches this Cortex directly, and follows it when it moves.
    cortexUrl: () => cortexUrl,
  });
}, 180_000);

afterAll(async () => {
  await operator?.stop();
  await cortex?.close();
  await client.delete(
    `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/remram-operator-test-${suffix}`,
  );
  await client.delete(`/api/v1/namespaces/${namespace}`);
  rmSync(scratch, { recursive: true, force: true });
});

describe("a DimensionPolicy against the real Cortex", () => {
  it("is PUT to /dimensions and reports Synced with Cortex's hash, guarded by its finalizer", async () => {
    await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/dimensionpolicies`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "DimensionPolicy",
      // Named after its appliance: one policy per appliance.
      metadata: { name: "box", namespace },
      spec: {
        applianceRef: { name: "box" },
        dimensions: [{ name: "topic" }, { name: "place", values: ["home"] }],
      },
    });
    const synced = await untilSynced("True", "Applied");
    // The hash is the one Cortex answered the PUT with.
    expect(synced.status?.appliedHash).toMatch(sha256);
    firstHash = synced.status?.appliedHash;
    expect(synced.metadata.finalizers).toContain("remram.io/deregister-dimensions");
  });

  it("reports CortexUnavailable while Cortex is down, backs off instead of looping, and recovers", async () => {
    await cortex?.close();
    cortex = undefined;
    await client.mergePatch(policyPath, { spec: { candidatePromotion: { minOccurrences: 5 } } });
    await untilSynced("False", "CortexUnavailable");
    const attempts = async () =>
      (await operator.metrics.reconcileTotal.get()).values
        .filter((value) => value.labels.controller === "dimensionpolicy")
        .reduce((sum, value) => sum + value.value, 0);
    const before = await attempts();
    await sleep(10_000);
    // Backoff 1 s, 2 s, 4 s, 8 s: a handful of attempts in 10 s, not hundreds.
    expect((await attempts()) - before).toBeLessThanOrEqual(5);
    await startCortex();
    const recovered = await untilSynced("True", "Applied");
    // The edited policy is what Cortex now holds.
    expect(recovered.status?.appliedHash).toMatch(sha256);
    expect(recovered.status?.appliedHash).not.toBe(firstHash);
  });

  it("resets Cortex to the default policy on delete, then lets the object go", async () => {
    // The finalizer is removed only after Cortex accepted the reset, so the object going away proves the PUT.
    await client.delete(policyPath);
    await waitFor(async () => ((await policy()) === undefined ? true : undefined), {
      what: "policy deleted",
      timeoutMs: 60_000,
      intervalMs: 250,
    });
  });
});

describe("a DreamSchedule against the real Cortex", () => {
  it("runs a requested cycle through /dream and records the outcome and the report's counts", async () => {
    const path = `/apis/remram.io/v1alpha1/namespaces/${namespace}/dreamschedules`;
    await client.create(path, {
      apiVersion: "remram.io/v1alpha1",
      kind: "DreamSchedule",
      metadata: { name: "nightly", namespace },
      spec: { applianceRef: { name: "box" }, schedule: "0 3 * * *", timeZone: "Europe/Berlin" },
    });
    const requestedAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    // What `kubectl remram dream now nightly` does.
    await client.mergePatch(`${path}/nightly`, {
      metadata: { annotations: { "remram.io/dream-requested-at": requestedAt } },
    });
    type Schedule = KubeObject & {
      status?: {
        lastScheduleTime?: string;
        lastSuccessfulTime?: string;
        nextScheduleTime?: string;
        lastRun?: {
          outcome: string;
          message?: string;
          counts?: Record<string, number>;
          mirroredProposals?: number;
        };
      };
    };
    const done = await waitFor(
      async () => {
        const current = await client.get<Schedule>(`${path}/nightly`);
        const outcome = current?.status?.lastRun?.outcome;
        return outcome === "Succeeded" || outcome === "Failed" ? current : undefined;
      },
      { what: "the requested dream cycle", timeoutMs: 90_000, intervalMs: 500 },
    );
    expect(done.status?.lastScheduleTime).toBe(requestedAt);
    expect(done.status?.lastRun?.outcome, done.status?.lastRun?.message).toBe("Succeeded");
    expect(done.status?.lastSuccessfulTime).toBeDefined();
    expect(Object.keys(done.status?.lastRun?.counts ?? {}).length).toBeGreaterThan(0);
    expect(done.status?.lastRun?.mirroredProposals).toBe(0);
    expect(Date.parse(done.status?.nextScheduleTime ?? "")).toBeGreaterThan(Date.now());
  });
});

describe("an ArtifactProposal approved with kubectl remram against the real Cortex", () => {
  const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}`;
  const alice = client.as("alice", ["system:authenticated"]);
  type Proposal = ProposalView & { status?: ProposalView["status"] & { phase?: string } };

  it("is mirrored from a dream, promoted into git once on approval, and reports the commit", async () => {
    // A household constraint from a reflection: the next dream proposes it for the household's facts artifact.
    const reflected = await fetch(`${cortexUrl}/reflect`, {
      method: "POST",
      headers: gatewayHeaders,
      body: JSON.stringify({
        principal: { userId: "alice", householdId: "home", agentId: "main" },
        sessionId: "s-boiler",
        items: [
          {
            type: "constraint",
            statement: "The boiler must be serviced every May",
            scope: { kind: "household", ownerIds: ["home"] },
            sourceTurnIds: ["turn-1"],
            // "Remember this": a user directive qualifies for the artifact without waiting for reinforcement.
            userDirective: true,
          },
        ],
      }),
    });
    expect(reflected.status, await reflected.text()).toBe(200);
    // An approver: the chart's remram-approver role, bound in this namespace.
    await grantApprover(client, namespace, "alice");

    // A mirror nobody decided on whose proposal Cortex no longer holds (as after an erasure deleted it): the next
    // cycle deletes it, since its diff may quote what was erased.
    await client.create(`${api}/artifactproposals`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "ArtifactProposal",
      metadata: { name: "box-erased", namespace, labels: { "remram.io/appliance": "box" } },
      spec: {
        applianceRef: { name: "box" },
        proposalId: "proposal-erased",
        artifactPath: "notes/erased.md",
        proposedDigest: `sha256:${"0".repeat(64)}`,
        diff: "+ something an erased person said",
        rationale: "proposed by dream",
        proposedBy: "remram-admin",
      },
    });

    // A decided mirror whose proposal Cortex no longer holds at all (an erasure deletes the proposals naming what it
    // erased): its diff would keep quoting the erased text in the cluster, so the cycle's mirror deletes it too.
    await client.create(`${api}/artifactproposals`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "ArtifactProposal",
      metadata: { name: "box-erased-decided", namespace, labels: { "remram.io/appliance": "box" } },
      spec: {
        applianceRef: { name: "box" },
        proposalId: "proposal-erased-decided",
        artifactPath: "notes/erased-decided.md",
        proposedDigest: `sha256:${"1".repeat(64)}`,
        diff: "+ something else the erased person said",
        rationale: "proposed by dream",
        proposedBy: "remram-admin",
      },
    });
    const awaiting = await waitFor(
      async () => {
        const current = await client.get<Proposal>(`${api}/artifactproposals/box-erased-decided`);
        return current?.status?.phase === "Pending" ? current : undefined;
      },
      { what: "the decided mirror awaiting approval", timeoutMs: 60_000, intervalMs: 500 },
    );
    await alice.jsonPatch(
      `${api}/artifactproposals/box-erased-decided/status`,
      decisionPatch(awaiting, "Denied", "alice", new Date().toISOString().replace(/\.\d{3}Z$/, "Z")),
    );

    // `kubectl remram dream now nightly`: a request newer (to the second) than the schedule's last run.
    await sleep(1_100);
    const requestedAt = new Date().toISOString().replace(/\.\d{3}Z$/, "Z");
    await client.mergePatch(`${api}/dreamschedules/nightly`, {
      metadata: { annotations: { "remram.io/dream-requested-at": requestedAt } },
    });
    type ScheduleRun = KubeObject & {
      status?: { lastScheduleTime?: string; lastRun?: { outcome: string; mirroredProposals?: number } };
    };
    const run = await waitFor(
      async () => {
        const current = await client.get<ScheduleRun>(`${api}/dreamschedules/nightly`);
        const outcome = current?.status?.lastRun?.outcome;
        return current?.status?.lastScheduleTime === requestedAt &&
          (outcome === "Succeeded" || outcome === "Failed")
          ? current
          : undefined;
      },
      { what: "the requested dream cycle", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(run.status?.lastRun, JSON.stringify(run.status?.lastRun)).toMatchObject({ outcome: "Succeeded" });
    expect(run.status?.lastRun?.mirroredProposals).toBeGreaterThanOrEqual(1);
    expect(await client.get(`${api}/artifactproposals/box-erased`)).toBeUndefined();
    expect(await client.get(`${api}/artifactproposals/box-erased-decided`)).toBeUndefined();
    const mirrored = await waitFor(
      async () => {
        const list = await client.get<{ items: Proposal[] }>(`${api}/artifactproposals`);
        return list?.items.find((item) => item.status?.phase === "Pending");
      },
      { what: "a mirrored ArtifactProposal the operator has picked up", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(mirrored.spec.artifactPath).toMatch(/\.md$/);

    // What `kubectl remram approve NAME` sends, as the approver.
    const name = mirrored.metadata.name;
    await alice.jsonPatch(
      `${api}/artifactproposals/${name}/status`,
      decisionPatch(mirrored, "Approved", "alice", new Date().toISOString().replace(/\.\d{3}Z$/, "Z")),
    );
    const promoted = await waitFor(
      async () => {
        const current = await client.get<Proposal>(`${api}/artifactproposals/${name}`);
        return current?.status?.phase === "Promoted" || current?.status?.phase === "Failed"
          ? current
          : undefined;
      },
      { what: "the approved proposal promoted", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(promoted.status?.phase, JSON.stringify(promoted.status?.conditions)).toBe("Promoted");
    const commitId = promoted.status?.promotion?.commitId ?? "";
    const log = await simpleGit(workspaceDir).log();
    expect(log.all.filter((entry) => entry.hash.startsWith(commitId))).toHaveLength(1);
    // The commit names the proposal and the approver.
    expect(`${log.latest?.message}\n${log.latest?.body}`).toContain(mirrored.spec.proposalId);
    expect(`${log.latest?.message}\n${log.latest?.body}`).toContain("approved by alice");
    expect(existsSync(join(workspaceDir, mirrored.spec.artifactPath))).toBe(true);
    // Level-triggered: later reconciles of the promoted proposal commit nothing more.
    await sleep(3_000);
    expect((await simpleGit(workspaceDir).log()).total).toBe(log.total);
  }, 240_000);

  it("mirrors an explicit save's page at once, without a dream; a later save replaces it; approval promotes it", async () => {
    const remember = async (statement: string, turnId: string) => {
      const response = await fetch(`${cortexUrl}/remember`, {
        method: "POST",
        headers: gatewayHeaders,
        body: JSON.stringify({
          principal: { userId: "alice", householdId: "home", agentId: "main" },
          statement,
          type: "fact",
          scope: "household",
          sessionId: "s-save",
          turnId,
        }),
      });
      expect(response.status, await response.clone().text()).toBe(200);
      const body = (await response.json()) as { proposal: { status: string; id?: string } };
      expect(body.proposal.status).toBe("pending");
      return body.proposal.id ?? "";
    };
    const mirrorOf = (proposalId: string) =>
      waitFor(
        async () => {
          const list = await client.get<{ items: Proposal[] }>(`${api}/artifactproposals`);
          return list?.items.find(
            (item) => item.spec.proposalId === proposalId && item.status?.phase === "Pending",
          );
        },
        { what: `the ArtifactProposal of ${proposalId}`, timeoutMs: 60_000, intervalMs: 200 },
      );
    const mirrorsOf = async (proposalId: string) =>
      ((await client.get<{ items: Proposal[] }>(`${api}/artifactproposals`))?.items ?? []).filter(
        (item) => item.spec.proposalId === proposalId,
      );

    // "Remember for the family that …": Cortex proposes the household's facts page at once.
    const savedAt = Date.now();
    const first = await remember("The water main valve is behind the washing machine", "t-save-1");
    const firstMirror = await mirrorOf(first);
    const mirroredAfterMs = Date.now() - savedAt;
    console.log(
      `explicit save → pending ArtifactProposal (operator mirror, 10 s period): ${mirroredAfterMs} ms`,
    );
    expect(mirroredAfterMs).toBeLessThan(30_000);
    expect(firstMirror.spec.rationale).toMatch(/^explicit save/);
    expect(firstMirror.spec.artifactPath).toBe("artifacts/households/home/facts.md");

    // The same save again is the same proposal: still one object for it.
    expect(await remember("The water main valve is behind the washing machine.", "t-save-1")).toBe(first);
    await sleep(1_500);
    expect(await mirrorsOf(first)).toHaveLength(1);

    // A second save on the page replaces the undecided first proposal with one listing both.
    const second = await remember("The fuse box is in the cellar by the stairs", "t-save-2");
    expect(second).not.toBe(first);
    const secondMirror = await mirrorOf(second);
    await waitFor(async () => ((await mirrorsOf(first)).length === 0 ? true : undefined), {
      what: "the superseded proposal's mirror deleted",
      timeoutMs: 60_000,
      intervalMs: 500,
    });

    await alice.jsonPatch(
      `${api}/artifactproposals/${secondMirror.metadata.name}/status`,
      decisionPatch(secondMirror, "Approved", "alice", new Date().toISOString().replace(/\.\d{3}Z$/, "Z")),
    );
    const promoted = await waitFor(
      async () => {
        const current = await client.get<Proposal>(`${api}/artifactproposals/${secondMirror.metadata.name}`);
        return current?.status?.phase === "Promoted" || current?.status?.phase === "Failed"
          ? current
          : undefined;
      },
      { what: "the approved page promoted", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(promoted.status?.phase, JSON.stringify(promoted.status?.conditions)).toBe("Promoted");
    const page = readFileSync(join(workspaceDir, "artifacts/households/home/facts.md"), "utf8");
    expect(page).toContain("The water main valve is behind the washing machine");
    expect(page).toContain("The fuse box is in the cellar by the stairs");
  }, 240_000);
});

describe("an appliance's data checked by the operator against the real Cortex", () => {
  type Appliance = KubeObject & {
    status?: {
      consistency?: { consistent: boolean; findings: number; byKind?: unknown[]; examples?: string[] };
      embeddings?: unknown;
      migrations?: unknown;
      storage?: { writesRefused: boolean; refusal?: string };
      conditions?: { type: string; status: string; reason: string; message: string }[];
    };
  };
  const appliancePath = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/box`;
  /** The appliance once its condition `type` has `status` (and `reason`, when given). */
  const untilCondition = (type: string, status: string, reason?: string, timeoutMs = 60_000) =>
    waitFor(
      async () => {
        const appliance = await client.get<Appliance>(appliancePath);
        const condition = getStatusCondition(appliance, type);
        const reached = condition?.status === status && (reason === undefined || condition.reason === reason);
        return reached ? appliance : undefined;
      },
      { what: `${type}=${status}${reason ? ` (${reason})` : ""}`, timeoutMs, intervalMs: 500 },
    );
  const untilDataConsistent = (status: string, reason: string) =>
    untilCondition("DataConsistent", status, reason);
  const findingsMetric = async () =>
    /remram_appliance_consistency_findings\{namespace="[^"]+",appliance="box"\} (\d+)/.exec(
      await operator.metrics.registry.metrics(),
    )?.[1];

  it("reports a sound store, then a damage by kind and id, then the repair", async () => {
    const sound = await untilDataConsistent("True", "ChecksPassed");
    expect(sound.status?.consistency).toMatchObject({ consistent: true, findings: 0 });
    expect(await findingsMetric()).toBe("0");

    // A summary entry naming a transcript the archive does not hold, as a restore that missed the volume leaves it.
    const lost = "e".repeat(64);
    const entry = `${opensearch.url}/op-${suffix}-archive/_doc/${lost}?refresh=true`;
    const put = await fetch(entry, {
      method: "PUT",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ hash: lost, ownerIds: ["ana"] }),
    });
    expect(put.ok, await put.text()).toBe(true);
    const damaged = await untilDataConsistent("False", "FindingsReported");
    expect(damaged.status?.consistency).toMatchObject({
      consistent: false,
      findings: 1,
      byKind: [{ kind: "archive-entry-without-document", count: 1 }],
      examples: [expect.stringContaining(lost)],
    });
    expect(getStatusCondition(damaged, "DataConsistent")?.message).toContain(
      "1 archive-entry-without-document",
    );
    // Data damage is not an outage: the appliance's readiness does not depend on it.
    expect(getStatusCondition(damaged, "Degraded")?.status).not.toBe("True");
    expect(await findingsMetric()).toBe("1");

    expect((await fetch(entry, { method: "DELETE" })).ok).toBe(true);
    await untilDataConsistent("True", "ChecksPassed");
    expect(await findingsMetric()).toBe("0");
  }, 180_000);

  it("reports what Cortex says of its vectors (this Cortex has no embedding model)", async () => {
    const appliance = await untilCondition("EmbeddingsCurrent", "True");
    expect(getStatusCondition(appliance, "EmbeddingsCurrent")).toMatchObject({
      reason: "NoEmbeddingModel",
      message: "no embedding model: retrieval is by words only",
    });
    expect(appliance.status?.embeddings).toEqual({ dimensions: 384, state: "none", done: 0, total: 0 });
  }, 90_000);

  it("reports Cortex's index migrations (a fresh Cortex has nothing to migrate)", async () => {
    const appliance = await untilCondition("IndexesCurrent", "True");
    expect(getStatusCondition(appliance, "IndexesCurrent")).toMatchObject({
      reason: "IndexesCurrent",
      message: expect.stringMatching(/^every index is on index template \d+$/),
    });
    expect(appliance.status?.migrations).toMatchObject({ state: "current", kept: [] });
  }, 90_000);

  it("reports the room left, writes refused while OpenSearch blocks them, and room again once it lifts", async () => {
    const untilStorage = (status: string, reason: string) =>
      untilCondition("StorageAvailable", status, reason, 100_000);
    const roomy = await untilStorage("True", "SpaceAvailable");
    // The archive folder is made at the first archived transcript; until then there is no volume to report.
    expect(getStatusCondition(roomy, "StorageAvailable")?.message).toMatch(
      /^workspace \d+% free(, archive \d+% free)?, OpenSearch's disk \d+% used \(flood stage .+\)$/,
    );
    // OpenSearch past its flood-stage watermark puts this block on the indices; here only on this Cortex's.
    const block = (on: boolean) =>
      fetch(`${opensearch.url}/op-${suffix}-*/_settings`, {
        method: "PUT",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ index: { blocks: { read_only_allow_delete: on ? true : null } } }),
      });
    expect((await block(true)).ok).toBe(true);
    try {
      const full = await untilStorage("False", "WritesRefused");
      expect(full.status?.storage?.writesRefused).toBe(true);
      expect(getStatusCondition(full, "StorageAvailable")?.message).toContain(
        "OpenSearch's disk is past its flood-stage watermark",
      );
      // Not an outage: reads go on, so it never holds Ready back.
      expect(getStatusCondition(full, "Ready")?.reason).not.toBe("WritesRefused");
    } finally {
      await block(false);
    }
    await untilStorage("True", "SpaceAvailable");
  }, 240_000);
});

describe("an appliance's data backed up on its schedule against the real Cortex", () => {
  type Appliance = KubeObject & {
    status?: {
      backup?: { lastScheduleTime?: string; backups: number; lastSuccessfulBackup?: Record<string, unknown> };
      conditions?: { type: string; status: string; reason: string; message: string }[];
    };
  };
  const appliancePath = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/box`;
  const untilBackedUp = (status: string, reason: string) =>
    waitFor(
      async () => {
        const appliance = await client.get<Appliance>(appliancePath);
        const condition = getStatusCondition(appliance, "BackedUp");
        return condition?.status === status && condition.reason === reason ? appliance : undefined;
      },
      { what: `BackedUp=${status} (${reason})`, timeoutMs: 150_000, intervalMs: 1_000 },
    );

  it("says the memory is not backed up without spec.backup, then backs up every minute once it is set", async () => {
    const unconfigured = await untilBackedUp("False", "BackupsNotConfigured");
    expect(getStatusCondition(unconfigured, "BackedUp")?.message).toContain("spec.backup");
    // Not an outage: readiness does not depend on it.
    expect(getStatusCondition(unconfigured, "Degraded")?.status).not.toBe("True");

    // The household's age key: each backup holds the appliance's Secrets sealed to it.
    const householdKey = await generateX25519Identity();
    await client.mergePatch(appliancePath, {
      spec: {
        backup: {
          volume: { claimName: "usb-disk" },
          schedule: "* * * * *",
          keep: 2,
          secrets: { ageRecipients: [await identityToRecipient(householdKey)] },
        },
      },
    });
    // The claim is not there yet (a misspelt name looks the same): Cortex keeps running without the mount, which
    // would hold its pod Pending, and BackedUp names what is missing.
    const missing = await untilBackedUp("False", "BackupDestinationMissing");
    expect(getStatusCondition(missing, "BackedUp")?.message).toMatch(
      /^PersistentVolumeClaim usb-disk \(spec\.backup\.volume\.claimName\) does not exist in namespace /,
    );
    const cortexVolumes = async () =>
      (
        await client.get<KubeObject & { spec: { template: { spec: { volumes?: { name: string }[] } } } }>(
          `/apis/apps/v1/namespaces/${namespace}/deployments/box-cortex`,
        )
      )?.spec.template.spec.volumes?.map((volume) => volume.name) ?? [];
    expect(await cortexVolumes()).not.toContain("backups");

    await client.create(`/api/v1/namespaces/${namespace}/persistentvolumeclaims`, {
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name: "usb-disk", namespace },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
    });
    const backedUp = await untilBackedUp("True", "BackupSucceeded");
    expect(await cortexVolumes()).toContain("backups");
    expect(backedUp.status?.backup).toMatchObject({
      lastScheduleTime: expect.any(String),
      backups: 1,
      lastSuccessfulBackup: { id: expect.stringMatching(/^backup-/), commits: expect.any(Number) },
    });
    // The backup is in the volume, complete (its manifest written last).
    const folder = join(scratch, "backups", String(backedUp.status?.backup?.lastSuccessfulBackup?.id));
    expect(existsSync(join(folder, "manifest.json"))).toBe(true);

    // The Secrets, sealed: only the household's key opens them, and they apply into a new appliance's namespace
    // with the values the operator and Cortex use (here Cortex's operator credential).
    const sealed = readFileSync(join(folder, secretsAttachmentName));
    expect(sealed.includes(Buffer.from(operatorToken))).toBe(false);
    const decrypter = new Decrypter();
    decrypter.addIdentity(householdKey);
    const manifest = load(await decrypter.decrypt(sealed, "text")) as { kind: string; items: KubeObject[] };
    expect(manifest.kind).toBe("List");
    expect(manifest.items.map((item) => item.metadata.name)).toContain("box-cortex-operator");
    const restoredNamespace = `${namespace}-restored`;
    await createNamespace(client, restoredNamespace);
    try {
      for (const item of manifest.items)
        await client.create(`/api/v1/namespaces/${restoredNamespace}/secrets`, item);
      const restored = await client.get<KubeObject & { data: Record<string, string> }>(
        `/api/v1/namespaces/${restoredNamespace}/secrets/box-cortex-operator`,
      );
      expect(Buffer.from(restored?.data.token ?? "", "base64").toString()).toBe(operatorToken);
      expect(restored?.metadata.labels?.["app.kubernetes.io/managed-by"]).toBe("remram-operator");
    } finally {
      await client.delete(`/api/v1/namespaces/${restoredNamespace}`);
    }
  }, 200_000);
});
