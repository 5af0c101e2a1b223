// One DimensionPolicy per appliance: Cortex holds one policy per appliance, so two objects would overwrite each
// other there. Admission ties a policy's name to its appliance; policies made before that rule (installed here by
// serving the CRD without it for a moment) are sorted out by the operator: one applied, the others refused.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import { buildCrd, crdName } from "../src/api/crd.js";
import { dimensionPolicyKind } from "../src/api/v1alpha1/dimension-policy.js";
import { KubeApiError, type KubeObject } from "../src/runtime/kube-client.js";
import { adminClient, createNamespace, getStatusCondition, installCrds, runSuffix } from "./cluster.js";
import { cortexHeaders, type OperatorAndCortex, startOperatorAndCortex } from "./operator-cortex.js";

const { client: admin, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `dimpol-${suffix}`;
const policies = `/apis/remram.io/v1alpha1/namespaces/${namespace}/dimensionpolicies`;
const refusal = "a DimensionPolicy is named after its appliance (one policy per appliance)";

let testbed: OperatorAndCortex;

type Policy = KubeObject & {
  status?: {
    appliedHash?: string;
    conditions?: { type: string; status: string; reason: string; message: string }[];
  };
};

const policy = (name: string, dimension: string) => ({
  apiVersion: "remram.io/v1alpha1",
  kind: "DimensionPolicy",
  metadata: { name, namespace },
  spec: { applianceRef: { name: "box" }, dimensions: [{ name: dimension }] },
});

/** Serve the DimensionPolicy CRD as it was before the rule (or, with `withRule`, as committed). */
async function serveCrd(withRule: boolean): Promise<void> {
  const { metadataNameRule: _rule, ...before } = dimensionPolicyKind;
  const kind = withRule ? dimensionPolicyKind : before;
  await admin.send("PATCH", `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crdName(kind)}`, {
    query: { fieldManager: "remram-test", force: "true" },
    body: buildCrd(kind),
    contentType: "application/apply-patch+yaml",
  });
}

/** Create `body`, retrying while the API server still serves the schema with the rule. */
async function createBeforeRule(body: unknown): Promise<void> {
  await waitFor(
    async () => {
      try {
        await admin.create(policies, body);
        return true;
      } catch (error) {
        if (error instanceof KubeApiError && error.message.includes(refusal)) return undefined;
        throw error;
      }
    },
    { what: "the CRD without the name rule served", timeoutMs: 30_000, intervalMs: 250 },
  );
}

async function synced(name: string, status: string, reason: string): Promise<Policy> {
  return waitFor(
    async () => {
      const current = await admin.get<Policy>(`${policies}/${name}`);
      const condition = getStatusCondition(current, "Synced");
      return condition?.status === status && condition.reason === reason ? current : undefined;
    },
    { what: `${name} Synced=${status} (${reason})`, timeoutMs: 60_000, intervalMs: 250 },
  );
}

async function inCortex(): Promise<{ appliedHash?: string; updatedAt?: string | null }> {
  const response = await fetch(`${testbed.cortexUrl}/dimensions`, { headers: cortexHeaders("operator") });
  const { appliedHash, updatedAt } = (await response.json()) as {
    appliedHash?: string;
    updatedAt?: string | null;
  };
  return { appliedHash, updatedAt };
}

async function hashInCortex(): Promise<string | undefined> {
  return (await inCortex()).appliedHash;
}

beforeAll(async () => {
  await installCrds(admin);
  await createNamespace(admin, namespace);
  // Two policies for one appliance, from before the rule; "household" is the older.
  await serveCrd(false);
  await createBeforeRule(policy("household", "topic"));
  await new Promise((resolve) => setTimeout(resolve, 1_100));
  await createBeforeRule(policy("garden", "plant"));
  await serveCrd(true);
  await waitFor(
    async () => {
      try {
        await admin.create(`${policies}?dryRun=All`, policy("probe", "topic"));
        return undefined;
      } catch (error) {
        if (error instanceof KubeApiError && error.message.includes(refusal)) return true;
        throw error;
      }
    },
    { what: "the name rule in force", timeoutMs: 30_000, intervalMs: 250 },
  );
  testbed = await startOperatorAndCortex(admin, kubeConfig, namespace, suffix);
}, 240_000);

afterAll(async () => {
  await testbed?.stop();
  await admin.delete(`/api/v1/namespaces/${namespace}`);
  await installCrds(admin);
});

describe("one DimensionPolicy per appliance", () => {
  it("is enforced at admission: a policy not named after its appliance is refused, saying why", async () => {
    const error = await admin.create(policies, policy("extra", "topic")).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(KubeApiError);
    expect((error as KubeApiError).message).toContain(
      `spec.applianceRef.name: Invalid value: "object": ${refusal}: metadata.name must equal spec.applianceRef.name`,
    );
  });

  it("of two policies made before the rule, applies the older and refuses the other with DuplicatePolicy", async () => {
    const applied = await synced("household", "True", "Applied");
    const refused = await synced("garden", "False", "DuplicatePolicy");
    expect(getStatusCondition(refused, "Ready")?.reason).toBe("DuplicatePolicy");
    expect(getStatusCondition(refused, "Synced")?.message).toContain(
      "takes its policy from DimensionPolicy household",
    );
    expect(refused.status?.appliedHash).toBeUndefined();
    expect(await hashInCortex()).toBe(applied.status?.appliedHash);
    // The Event follows the status write.
    await waitFor(
      async () => {
        const events = await admin.get<{ items: { reason: string; regarding: { name: string } }[] }>(
          `/apis/events.k8s.io/v1/namespaces/${namespace}/events`,
        );
        return events?.items.some(
          (event) => event.regarding.name === "garden" && event.reason === "DuplicatePolicy",
        )
          ? true
          : undefined;
      },
      { what: "a DuplicatePolicy Event about garden", timeoutMs: 10_000, intervalMs: 250 },
    );
  });

  it("hands the appliance to the policy named after it, which admission admits", async () => {
    await admin.create(policies, policy("box", "room"));
    const named = await synced("box", "True", "Applied");
    await synced("household", "False", "DuplicatePolicy");
    expect(await hashInCortex()).toBe(named.status?.appliedHash);
  });

  it("lets a refused duplicate made before the rule be deleted without touching Cortex's policy", async () => {
    // updatedAt too: a reset followed by the holder's re-PUT would end at the same hash.
    const inForce = await inCortex();
    // household still carries the finalizer from when it was applied; the operator releases it without a reset.
    await admin.delete(`${policies}/household`);
    await waitFor(async () => ((await admin.get(`${policies}/household`)) === undefined ? true : undefined), {
      what: "household deleted",
      timeoutMs: 60_000,
      intervalMs: 250,
    });
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(await inCortex()).toEqual(inForce);
  });
});
