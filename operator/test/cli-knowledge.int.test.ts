// REMRAM_TESTBED=kubernetes,opensearch: `kubectl remram knowledge` against the real remram-app and a real Cortex,
// both in this process on loopback: Cortex on the test bed's OpenSearch (household "home"), the app with an identity
// of its own (a ServiceAccount that may get the appliance, nothing else) on the test bed's API server. Alice's and
// Bob's credentials come from the plugin's own `user add -o kubeconfig`; the plugin runs through main() with them
// and --app-url, as a member would from a terminal.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { IngestResponse, PersonKnowledgeItem, PersonKnowledgeResponse } from "@remram/contract";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildApp as buildRemramApp } from "../../app/src/app.js";
import { appConfig } from "../../app/src/config.js";
import { forgottenIndex } from "../../cortex/src/knowledge/forgotten.js";
import { tombstoneIndex } from "../../cortex/src/knowledge/tombstones.js";
import { bearer, type FullCortex, startFullCortex, testCredentials } from "../../cortex/test/helpers.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { KubeClient } from "../src/runtime/kube-client.js";
import { appIdentity } from "./app-identity.js";
import { type AppliedRoles, applyChartRoles } from "./chart-roles.js";
import { runCli } from "./cli-main.js";
import { adminClient, createNamespace, installCrds, runSuffix } from "./cluster.js";

const kubernetes = testbedEndpoints("kubernetes");
const { client: admin, kubeConfig: adminConfig } = adminClient();
const suffix = runSuffix();
const namespace = `cli-knowledge-${suffix}`;
const household = "home";
const scratch = mkdtempSync(join(tmpdir(), "cli-knowledge-"));
const kubeconfigOf = (member: string) => join(scratch, `${member}.kubeconfig`);

const fact = (key: string, userId: string | undefined, statement: string) => ({
  kind: "knowledge",
  provenanceKey: `${suffix}-${key}`,
  scope: userId === undefined ? "household" : "user",
  owner: userId === undefined ? { householdId: household } : { userId },
  privacy: userId === undefined ? "household" : "private",
  statement,
  type: "fact",
  source: "user",
  confidence: 0.8,
  sessionId: `telegram:${userId ?? "group"}`,
});
const events = [
  fact("a-bike", "alice", "Alice keeps her bicycle in the garage"),
  fact("a-tea", "alice", "Alice drinks rooibos tea in the evening"),
  fact("a-party", "alice", "Alice is planning a surprise party for Bob"),
  fact("b-bike", "bob", "Bob keeps his bicycle at the office"),
  fact("b-jazz", "bob", "Bob listens to jazz while cooking"),
  fact("h-boat", undefined, "The boat is kept in the north shed"),
  fact("h-wifi", undefined, "The guest network is called Harbour"),
];

let cortex: FullCortex | undefined;
let app: FastifyInstance | undefined;
let appUrl = "";
let roles: AppliedRoles | undefined;
/** Ingested ids by event key. */
const ids = new Map<string, string>();
const idOf = (key: string) => ids.get(key) as string;

/** The plugin as `member` (their kubeconfig from `user add`), through the app's address. */
const knowledge = (member: string, ...args: string[]) =>
  runCli(["knowledge", ...args, "--app-url", appUrl, "--kubeconfig", kubeconfigOf(member)]);

const listed = (stdout: string) => JSON.parse(stdout) as PersonKnowledgeResponse;

/** A kubeconfig of the test bed's cluster with `user` as its only user. */
function kubeconfigWith(user: Record<string, string>): KubeConfig {
  const cluster = adminConfig.getCurrentCluster();
  if (cluster === null) throw new Error("the admin kubeconfig has no cluster");
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: "someone", ...user }],
    contexts: [{ name: "someone", cluster: cluster.name, user: "someone", namespace }],
    currentContext: "someone",
  });
  return config;
}

/** `user add MEMBER -o kubeconfig` as the test bed's admin, written where `knowledge` reads it. */
async function addMember(member: string, ...flags: string[]): Promise<void> {
  const added = await runCli([
    "user",
    "add",
    member,
    ...flags,
    "-o",
    "kubeconfig",
    "--kubeconfig",
    kubernetes.kubeconfig,
    "-n",
    namespace,
  ]);
  expect(added.code, added.stderr).toBe(0);
  writeFileSync(kubeconfigOf(member), added.stdout, { mode: 0o600 });
}

beforeAll(async () => {
  await installCrds(admin);
  await createNamespace(admin, namespace);
  roles = await applyChartRoles(admin, "remram-cli-knowledge-test", ["household-roles.yaml"]);
  await admin.create(`/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: {
      gateway: { dmScope: "per-channel-peer" },
      household: { id: household, members: [{ id: "alice" }, { id: "bob" }] },
    },
  });
  cortex = await startFullCortex({
    opensearchUrl: testbedEndpoints("opensearch").url,
    householdId: household,
  });
  await cortex.app.listen({ host: "127.0.0.1", port: 0 });
  const cortexPort = (cortex.app.server.address() as AddressInfo).port;
  app = await buildRemramApp({
    config: appConfig.parse({
      // As the appliance serves it: under /remram/, the prefix its front door routes to the app.
      basePath: "/remram/",
      namespace,
      appliance: "box",
      cortexUrl: `http://127.0.0.1:${cortexPort}`,
      cortexToken: testCredentials.app,
      secureCookies: false,
      identityCacheMs: 0,
      logLevel: "silent",
    }),
    kubeConfig: await appIdentity(admin, adminConfig, namespace, "box"),
    logger: false,
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  appUrl = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}/remram/`;

  await addMember("alice");
  await addMember("bob", "--admin");
  const ingested = await cortex.app.inject({
    method: "POST",
    url: "/ingest",
    headers: bearer("gateway"),
    payload: { events },
  });
  expect(ingested.statusCode, ingested.body).toBe(200);
  const { items } = ingested.json<IngestResponse>();
  events.forEach((event, index) => {
    ids.set(event.provenanceKey.slice(suffix.length + 1), items[index]?.ids[0] as string);
  });
  // The app asks with bob's own token whether he administers the appliance; RBAC's cache takes a moment.
  const bobConfig = new KubeConfig();
  bobConfig.loadFromFile(kubeconfigOf("bob"));
  const bob = new KubeClient(bobConfig);
  await waitFor(
    async () => {
      const review = await bob.create<{ status?: { allowed?: boolean } }>(
        "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
        {
          apiVersion: "authorization.k8s.io/v1",
          kind: "SelfSubjectAccessReview",
          spec: {
            resourceAttributes: {
              group: "remram.io",
              resource: "remramappliances",
              verb: "administer",
              namespace,
              name: "box",
            },
          },
        },
      );
      return review.status?.allowed === true ? true : undefined;
    },
    { what: "bob administers box", timeoutMs: 10_000, intervalMs: 200 },
  );
}, 120_000);

afterAll(async () => {
  await app?.close();
  if (cortex !== undefined) {
    const { client } = cortex.app.cortex.store;
    for (const index of [forgottenIndex(cortex.app.cortex.store), tombstoneIndex(cortex.app.cortex.store)])
      await client.transport.request({ method: "DELETE", path: `/${index}` }, { ignore: [404] });
    await cortex.stop();
  }
  await admin.delete(`/api/v1/namespaces/${namespace}`);
  await roles?.remove();
  rmSync(scratch, { recursive: true, force: true });
});

describe("kubectl remram knowledge", () => {
  it("lists alice's own knowledge and the household's, never bob's", async () => {
    const table = await knowledge("alice", "list");
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout.split("\n")[0]).toMatch(/^ID +TYPE +CONFIDENCE +STATUS +SCOPE +STATEMENT$/);
    for (const key of ["a-bike", "a-tea", "a-party", "h-boat", "h-wifi"])
      expect(table.stdout).toContain(idOf(key));
    expect(table.stdout).toMatch(new RegExp(`${idOf("h-boat")} +fact +0\\.80 +active +household +The boat`));
    expect(table.stdout).not.toContain("Bob keeps");
    expect(table.stdout).not.toContain("jazz");

    const json = await knowledge("alice", "list", "-o", "json");
    const all = listed(json.stdout);
    expect(all.total).toBe(5);
    expect(all.items.map((item) => item.object.id).sort()).toEqual(
      ["a-bike", "a-tea", "a-party", "h-boat", "h-wifi"].map(idOf).sort(),
    );
    const household = listed((await knowledge("alice", "list", "--scope", "household", "-o", "json")).stdout);
    expect(household.items.map((item) => item.object.id).sort()).toEqual(
      [idOf("h-boat"), idOf("h-wifi")].sort(),
    );
  });

  it("pages with --limit and --cursor", async () => {
    const first = await knowledge("alice", "list", "--limit", "2");
    const hint = /^2 of 5; more with --cursor (\S+)$/m.exec(first.stdout);
    expect(hint, first.stdout).not.toBeNull();
    const second = listed(
      (await knowledge("alice", "list", "--limit", "2", "--cursor", hint?.[1] as string, "-o", "json"))
        .stdout,
    );
    expect(second.items).toHaveLength(2);
    for (const item of second.items) expect(first.stdout).not.toContain(item.object.id);
  });

  it("searches by words, best match first, within what alice may see", async () => {
    const found = listed((await knowledge("alice", "search", "bicycle", "garage", "-o", "json")).stdout);
    expect(found.items[0]?.object.id).toBe(idOf("a-bike"));
    expect(found.items.map((item) => item.object.id)).not.toContain(idOf("b-bike"));
  });

  it("shows one object in full", async () => {
    const shown = await knowledge("alice", "show", idOf("a-tea"));
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toMatch(new RegExp(`^id: +${idOf("a-tea")}$`, "m"));
    expect(shown.stdout).toMatch(/^statement: +Alice drinks rooibos tea in the evening$/m);
    expect(shown.stdout).toMatch(/^provenance: +source user, .*observed /m);
    expect(shown.stdout).toMatch(/^scope: +user \(alice's\)$/m);
    const unknown = await knowledge("alice", "show", idOf("b-jazz"));
    expect(unknown.code).toBe(1);
    expect(unknown.stderr).toContain(`no knowledge object ${idOf("b-jazz")} among the 5 you may see`);
  });

  it("corrects: the old object is invalidated and points at the new one", async () => {
    const corrected = await knowledge(
      "alice",
      "correct",
      idOf("a-bike"),
      "Alice keeps her bicycle in the hall",
      "--reason",
      "she moved it",
    );
    expect(corrected.code, corrected.stderr).toBe(0);
    const created = /^created +(\S+): Alice keeps her bicycle in the hall$/m.exec(corrected.stdout)?.[1];
    expect(corrected.stdout).toContain(`invalidated ${idOf("a-bike")} (kept for the history)`);
    expect(created).toBeDefined();
    const old = JSON.parse(
      (await knowledge("alice", "show", idOf("a-bike"), "-o", "json")).stdout,
    ) as PersonKnowledgeItem;
    expect(old.object.status).toBe("invalidated");
    expect(old.contradictedBy).toEqual([{ id: created, statement: "Alice keeps her bicycle in the hall" }]);
    const text = await knowledge("alice", "show", idOf("a-bike"));
    expect(text.stdout).toMatch(
      new RegExp(`^replaced by: +${created} "Alice keeps her bicycle in the hall"$`, "m"),
    );
    const active = listed((await knowledge("alice", "list", "--status", "active", "-o", "json")).stdout);
    expect(active.items.map((item) => item.object.id)).toContain(created);
    expect(active.items.map((item) => item.object.id)).not.toContain(idOf("a-bike"));
  });

  it("forgets an object for good", async () => {
    const forgotten = await knowledge("alice", "forget", idOf("a-party"), "--reason", "the party is off");
    expect(forgotten.code, forgotten.stderr).toBe(0);
    expect(forgotten.stdout).toMatch(/^forgot 1 object at .* ms; audit \S+\nknowledge deleted 1/);
    const after = listed((await knowledge("alice", "list", "-o", "json")).stdout);
    expect(after.items.map((item) => item.object.id)).not.toContain(idOf("a-party"));
  });

  it("refuses bob's knowledge to alice, who is no household admin, and shows alice's to bob, who is", async () => {
    const refused = await knowledge("alice", "list", "--user", "bob");
    expect(refused.code).toBe(1);
    expect(refused.stdout).toBe("");
    expect(refused.stderr).toContain(
      "error: remram-app refused: only a household admin sees or changes another member's knowledge; alice is not one",
    );
    expect(refused.stderr).toContain("kubectl remram user add MEMBER -o kubeconfig");
    const asAdmin = await knowledge("bob", "list", "--user", "alice", "-o", "json");
    expect(asAdmin.code, asAdmin.stderr).toBe(0);
    expect(listed(asAdmin.stdout).items.map((item) => item.object.id)).toContain(idOf("a-tea"));
  });

  it("refuses a credential that is no member's, and a kubeconfig without a token, before sending anything", async () => {
    const notMember = await runCli([
      "knowledge",
      "list",
      "--app-url",
      appUrl,
      "--kubeconfig",
      kubernetes.kubeconfig,
    ]);
    expect(notMember.code).toBe(1);
    expect(notMember.stderr).toContain(
      "error: remram-app refused: remram-admin is not a member's credential",
    );
    const certificate = join(scratch, "certificate.kubeconfig");
    writeFileSync(certificate, kubeconfigWith({ certData: "Y2VydA==", keyData: "a2V5" }).exportConfig());
    const noToken = await runCli(["knowledge", "list", "--app-url", appUrl, "--kubeconfig", certificate]);
    expect(noToken).toEqual({
      code: 1,
      stdout: "",
      stderr:
        "error: knowledge needs a household member's credential: use the kubeconfig kubectl remram user add -o kubeconfig printed (the current user authenticates with a client certificate)\n",
    });
  });

  it("says how to reach the app when a member may not forward a port to its pod", async () => {
    const forwarded = await runCli(["knowledge", "list", "--kubeconfig", kubeconfigOf("alice")]);
    expect(forwarded.code).toBe(1);
    expect(forwarded.stderr).toContain(`box-member-alice may not list pods in namespace ${namespace}`);
    expect(forwarded.stderr).toContain("--app-url https://HOST/remram/");
    const token = new KubeConfig();
    token.loadFromFile(kubeconfigOf("alice"));
    expect(forwarded.stderr).not.toContain(token.getCurrentUser()?.token as string);
  });

  it("finds the app at the front door the appliance publishes, for a member who may neither list appliances nor port-forward", async () => {
    const status = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances/box/status`;
    // What the operator publishes for an Ingress; here the app's address on this machine stands in for the host.
    await admin.mergePatch(status, { status: { gateway: { url: "https://box.test/", appUrl } } });
    try {
      const table = await runCli(["knowledge", "list", "--kubeconfig", kubeconfigOf("alice")]);
      expect(table.code, table.stderr).toBe(0);
      expect(table.stdout).toContain(idOf("a-tea"));
      expect(table.stdout).not.toContain(idOf("b-jazz"));
    } finally {
      await admin.mergePatch(status, { status: { gateway: null } });
    }
  });

  it("forgets everything about alice, confirmed with her own id, and leaves her nothing", async () => {
    const wrong = await knowledge("alice", "forget", "--all", "--confirm", "bob");
    expect(wrong.code).toBe(1);
    expect(wrong.stderr).toContain("to forget everything, confirm with your member id (alice)");
    const erased = await knowledge("alice", "forget", "--all", "--confirm", "alice");
    expect(erased.code, erased.stderr).toBe(0);
    expect(erased.stdout).toMatch(/^forgot everything about alice at .*; audit \S+\nknowledge deleted [1-9]/);
    const left = listed((await knowledge("alice", "list", "-o", "json")).stdout);
    expect(left.items.every((item) => item.object.scope === "household")).toBe(true);
    expect(listed((await knowledge("alice", "list", "--scope", "user", "-o", "json")).stdout).total).toBe(0);
    // Bob's knowledge is untouched.
    expect(listed((await knowledge("bob", "list", "--scope", "user", "-o", "json")).stdout).total).toBe(2);
  });
});
