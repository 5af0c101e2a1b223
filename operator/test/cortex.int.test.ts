import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import type { FastifyInstance } from "fastify";
import { pino } from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { maturationPlugin } from "../../cortex/src/dream/maturation-plugin.js";
import { buildApp, cortexConfig } from "../../cortex/src/index.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { loadHardwareProfiles } from "../src/appliance/hardware-profiles.js";
import { defaultImages } from "../src/config.js";
import { type RunningOperator, startOperator } from "../src/operator.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import { adminClient, createNamespace, getStatusCondition, installCrds, runSuffix } from "./cluster.js";

const opensearch = testbedEndpoints("opensearch");
const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `cortex-${suffix}`;
const token = `cortex-token-${suffix}-0123456789`;
const scratch = mkdtempSync(join(tmpdir(), "remram-operator-cortex-"));
const policyPath = `/apis/remram.io/v1alpha1/namespaces/${namespace}/dimensionpolicies/household`;

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
    token,
    logLevel: "silent",
    port: 0,
    host: "127.0.0.1",
  });
  const workspaceDir = join(scratch, "workspace");
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

beforeAll(async () => {
  await installCrds(client);
  await createNamespace(client, namespace);
  await client.create(`/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "cortex-token", namespace },
    stringData: { token },
  });
  await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: { ollama: { gpu: "disabled" }, cortex: { tokenSecretRef: { name: "cortex-token", key: "token" } } },
  });
  await startCortex();
  operator = await startOperator({
    kubeConfig,
    log: pino({ level: "silent" }),
    identity: `cortex-test-${suffix}`,
    leaseNamespace: namespace,
    watchNamespaces: [namespace],
    images: defaultImages,
    profiles: loadHardwareProfiles(join(import.meta.dirname, "../../hardware-profiles")),
    probePort: 0,
    resyncMs: 60_000,
    // Outside the cluster the operator reaches this Cortex directly, and follows it when it moves.
    cortexUrl: () => cortexUrl,
  });
}, 180_000);

afterAll(async () => {
  await operator?.stop();
  await cortex?.close();
  await client.delete(`/api/v1/namespaces/${namespace}`);
  rmSync(scratch, { recursive: true, force: true });
});

describe("a DimensionPolicy against the real Cortex", () => {
  it("is PUT to /dimensions and reports Synced with Cortex's hash, guarded by its finalizer", async () => {
    await client.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/dimensionpolicies`, {
      apiVersion: "remram.io/v1alpha1",
      kind: "DimensionPolicy",
      metadata: { name: "household", namespace },
      spec: {
        applianceRef: { name: "box" },
        dimensions: [{ name: "topic" }, { name: "place", values: ["home"] }],
      },
    });
    const synced = await untilSynced("True", "Applied");
    // The hash is Cortex's answer to the PUT (GET /dimensions fails on a fresh index in this Cortex build).
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
    if (done.status?.lastRun?.outcome === "Succeeded") {
      expect(done.status.lastSuccessfulTime).toBeDefined();
      expect(Object.keys(done.status.lastRun.counts ?? {}).length).toBeGreaterThan(0);
      expect(done.status.lastRun.mirroredProposals).toBe(0);
    } else {
      // This Cortex build answers 500 on a store that has never ingested anything; the failure must be recorded
      // as Cortex's answer, not lost, and the request must not be retried in a loop.
      expect(done.status?.lastRun?.message).toMatch(/POST \/dream answered/);
      expect(done.status?.lastSuccessfulTime).toBeUndefined();
    }
    expect(Date.parse(done.status?.nextScheduleTime ?? "")).toBeGreaterThan(Date.now());
  });
});
