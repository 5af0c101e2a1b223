// REMRAM_TESTBED=kubernetes: an external OpenSearch the way a household's bigger cluster runs (the security plugin,
// TLS with a CA of its own, basic auth, a role limited to Cortex's indices), started for this suite. Cortex reads its
// URL, credentials and CA bundle the way the pod does (files named by REMRAM_* variables) and stores and finds
// knowledge through it; the operator (in this process, against the real API server) asks the cluster itself and
// names what is wrong: an untrusted certificate, refused credentials, a cluster that does not answer. Last, a
// household's knowledge moves from the embedded node (the test bed's OpenSearch) by snapshot and restore, the way
// docs/operator.md describes, and the moved Cortex finds it.
import { execFile } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import type { Client } from "@opensearch-project/opensearch";
import { type SecuredOpenSearchEndpoints, type Started, startSecuredOpenSearch } from "@remram/test-harness";
import type { FastifyInstance } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCorpus } from "../../bench/pollution-corpus.js";
import { buildApp, createStore, loadConfig } from "../../cortex/src/index.js";
import { bearer, testCredentials } from "../../cortex/src/testing/callers.js";
import { ingestEvents, startCortex } from "../../cortex/test/helpers.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { opensearchSecretsVersionAnnotation } from "../src/appliance/children/cortex.js";
import type { RunningOperator } from "../src/operator.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import {
  adminClient,
  createNamespace,
  getStatusCondition,
  installCrds,
  runSuffix,
  startTestOperator,
  untilCondition as untilApplianceCondition,
} from "./cluster.js";

const run = promisify(execFile);
const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `external-os-${suffix}`;
const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`;
const secrets = `/api/v1/namespaces/${namespace}/secrets`;

type Appliance = KubeObject & {
  status?: { conditions?: { type: string; status: string; reason: string; message?: string }[] };
};

let opensearch: Started<SecuredOpenSearchEndpoints>;
let operator: RunningOperator;
let scratch: string;

const appliance = () => client.get<Appliance>(`${api}/box`);
const untilCondition = (type: string, status: string, reason: string) =>
  untilApplianceCondition<Appliance>(client, `${api}/box`, type, status, reason);
const putSecret = async (name: string, stringData: Record<string, string>) => {
  const existing = await client.get<KubeObject>(`${secrets}/${name}`);
  if (existing === undefined) {
    await client.create(secrets, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace },
      stringData,
    });
  } else {
    await client.mergePatch(`${secrets}/${name}`, { stringData });
  }
};

/** Cortex configured the way its pod is: the URL, and files for the credentials and the CA bundle. */
async function cortexLikeThePod(
  ca: string,
  password: string,
  indexPrefix = `remram-${suffix}`,
): Promise<FastifyInstance> {
  const { url, username } = opensearch.endpoints;
  const dir = mkdtempSync(join(scratch, "cortex-"));
  mkdirSync(join(dir, "opensearch"));
  writeFileSync(join(dir, "opensearch", "username"), username);
  writeFileSync(join(dir, "opensearch", "password"), password);
  writeFileSync(join(dir, "ca.crt"), ca);
  const config = loadConfig({
    REMRAM_OPENSEARCH_URL: url,
    REMRAM_OPENSEARCH_CREDENTIALS_DIR: join(dir, "opensearch"),
    REMRAM_OPENSEARCH_CA_FILE: join(dir, "ca.crt"),
    // The role covers remram* indices only (renderUsers): a prefix under it.
    CORTEX_INDEX_PREFIX: indexPrefix,
    CORTEX_LOG_LEVEL: "silent",
    ...Object.fromEntries(
      Object.entries(testCredentials).map(([caller, token]) => [
        `CORTEX_${caller.toUpperCase()}_TOKEN`,
        token,
      ]),
    ),
  });
  return buildApp({ config, logger: false });
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), "remram-external-os-"));
  opensearch = await startSecuredOpenSearch({ timeoutMs: 180_000 });
  await installCrds(client);
  await createNamespace(client, namespace);
  const { caCertificate, username, password, url } = opensearch.endpoints;
  await putSecret("search-credentials", { username, password });
  await putSecret("search-ca", { "ca.crt": caCertificate });
  operator = await startTestOperator(kubeConfig, namespace, suffix);
  await client.create(api, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: {
      opensearch: {
        mode: "external",
        external: {
          url,
          credentialsSecretRef: { name: "search-credentials" },
          caSecretRef: { name: "search-ca" },
        },
      },
    },
  });
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await client.delete(`/api/v1/namespaces/${namespace}`);
  await opensearch?.stop();
  if (scratch !== undefined) rmSync(scratch, { recursive: true, force: true });
});

describe("an external OpenSearch with TLS, basic auth and a role limited to Cortex's indices", () => {
  it("lets Cortex store and find knowledge through it, configured from files as in its pod", async () => {
    const { caCertificate, password } = opensearch.endpoints;
    const cortex = await cortexLikeThePod(caCertificate, password);
    try {
      await cortex.cortex.initialized;
      const ready = await cortex.inject({ method: "GET", url: "/readyz" });
      expect(ready.json()).toMatchObject({ ready: true, checks: { opensearch: true, indices: true } });
      const owner = { userId: "ana", householdId: "home" };
      const ingest = await cortex.inject({
        method: "POST",
        url: "/ingest",
        headers: bearer("gateway"),
        payload: {
          events: [
            {
              kind: "knowledge",
              scope: "user",
              owner,
              statement: "The boat's mooring is at pier 9",
              type: "fact",
            },
          ],
        },
      });
      expect(ingest.statusCode, ingest.body).toBe(200);
      const found = await waitFor(
        async () => {
          const answer = await cortex.inject({
            method: "POST",
            url: "/retrieve",
            headers: bearer("gateway"),
            payload: {
              principal: { ...owner, agentId: "main" },
              requestText: "where is the boat moored?",
              tokenBudget: 400,
            },
          });
          expect(answer.statusCode, answer.body).toBe(200);
          return answer.body.includes("pier 9") ? answer.json() : undefined;
        },
        { what: "the fact in a retrieval", timeoutMs: 20_000, intervalMs: 500 },
      );
      expect(JSON.stringify(found)).toContain("pier 9");
    } finally {
      await cortex.close();
    }
  });

  it("keeps Cortex not ready, never crashed, when it trusts another CA or holds a wrong password", async () => {
    const { untrustedCaCertificate, caCertificate } = opensearch.endpoints;
    for (const [ca, password] of [
      [untrustedCaCertificate, opensearch.endpoints.password],
      [caCertificate, "not-the-password"],
    ] as const) {
      const cortex = await cortexLikeThePod(ca, password);
      try {
        const ready = await cortex.inject({ method: "GET", url: "/readyz" });
        expect(ready.statusCode).toBe(503);
        expect(ready.json()).toMatchObject({ ready: false, checks: { opensearch: false } });
      } finally {
        await cortex.close();
      }
    }
  });

  it("reports OpenSearchConnected, mounts the CA into Cortex and rolls Cortex when a Secret changes", async () => {
    const connected = await untilCondition("OpenSearchReady", "True", "OpenSearchConnected");
    expect(getStatusCondition(connected, "OpenSearchReady")?.message).toContain(opensearch.endpoints.url);
    const deployment = await client.get<KubeObject & { spec: Record<string, unknown> }>(
      `/apis/apps/v1/namespaces/${namespace}/deployments/box-cortex`,
    );
    const text = JSON.stringify(deployment?.spec);
    expect(text).toContain(
      '"name":"REMRAM_OPENSEARCH_CA_FILE","value":"/var/run/secrets/remram/opensearch-ca/ca.crt"',
    );
    expect(text).toContain('"secretName":"search-ca","items":[{"key":"ca.crt","path":"ca.crt"}]');
    expect(text).toContain(opensearchSecretsVersionAnnotation);
    // Never the values themselves in the pod template.
    expect(text).not.toContain(opensearch.endpoints.password);
  });

  it("names an untrusted certificate, refused credentials and a cluster that does not answer", async () => {
    const { untrustedCaCertificate, caCertificate, password } = opensearch.endpoints;
    await putSecret("search-ca", { "ca.crt": untrustedCaCertificate });
    const untrusted = await untilCondition("OpenSearchReady", "False", "OpenSearchCertificateUntrusted");
    expect(getStatusCondition(untrusted, "OpenSearchReady")?.message).toContain("caSecretRef");
    expect(getStatusCondition(untrusted, "Ready")?.status).toBe("False");

    await putSecret("search-ca", { "ca.crt": caCertificate });
    await putSecret("search-credentials", { password: "not-the-password" });
    const refused = await untilCondition("OpenSearchReady", "False", "OpenSearchUnauthorized");
    expect(getStatusCondition(refused, "OpenSearchReady")?.message).toContain("credentialsSecretRef");

    await putSecret("search-credentials", { password });
    await untilCondition("OpenSearchReady", "True", "OpenSearchConnected");
    await client.mergePatch(`${api}/box`, {
      spec: { opensearch: { external: { url: "https://127.0.0.1:9" } } },
    });
    await untilCondition("OpenSearchReady", "False", "OpenSearchUnreachable");
    // Nothing secret in what anyone with read access to the appliance sees.
    const status = JSON.stringify((await appliance())?.status);
    expect(status).not.toContain(password);
  });
});

describe("moving a household's knowledge from the embedded node to the external cluster", () => {
  it("snapshots Cortex's indices, restores them there, and Cortex finds the same knowledge", async () => {
    const corpus = loadCorpus();
    const indexPrefix = `remram-move-${suffix}`;
    const source = await startCortex({ opensearchUrl: testbedEndpoints("opensearch").url, indexPrefix });
    const events = corpus.flatMap((conversation) =>
      conversation.sessions.flatMap((session) =>
        session.turns.flatMap((turn, index) => {
          const owner = { userId: turn.userId, householdId: "home" };
          return [
            {
              kind: "turn",
              scope: "user",
              owner,
              role: "user",
              sessionId: session.sessionId,
              turnId: `${index}`,
              text: turn.user,
            },
            ...turn.facts.map((fact) => ({
              kind: "knowledge",
              scope: "user",
              owner,
              statement: fact.statement,
              type: "fact",
            })),
          ];
        }),
      ),
    );
    for (let start = 0; start < events.length; start += 200) {
      await ingestEvents(source, events.slice(start, start + 200));
    }
    // The administrator's own client (closing Cortex closes its client).
    const sourceClient = createStore({
      url: testbedEndpoints("opensearch").url,
      indexPrefix,
      embedDimensions: 384,
    }).client;
    await sourceClient.indices.refresh({ index: `${indexPrefix}-*` });
    const sourceCount = (await sourceClient.count({ index: `${indexPrefix}-*` })).body.count;
    await source.close();

    // 1. A shared-filesystem repository under the embedded node's path.repo; a snapshot of Cortex's indices only.
    const repoOf = async (client: Client): Promise<string> => {
      const info = await client.nodes.info({
        metric: ["settings"],
        filter_path: "nodes.*.settings.path.repo",
      });
      const node = Object.values(
        (info.body as { nodes: Record<string, { settings: { path: { repo: string | string[] } } }> }).nodes,
      )[0];
      const repo = node?.settings.path.repo;
      return Array.isArray(repo) ? (repo[0] ?? "") : (repo ?? "");
    };
    const location = `move-${suffix}`;
    const sourceRepo = join(await repoOf(sourceClient), location);
    const started = Date.now();
    await sourceClient.snapshot.createRepository({
      repository: location,
      body: { type: "fs", settings: { location: sourceRepo } },
    });
    await sourceClient.snapshot.create({
      repository: location,
      snapshot: "household",
      wait_for_completion: true,
      body: { indices: `${indexPrefix}-*`, include_global_state: false },
    });
    const snapshotMs = Date.now() - started;

    // 2. The snapshot's files to the new cluster's path.repo (scp, a USB disk, an NFS share: any copy does).
    const { admin, caCertificate, url } = opensearch.endpoints;
    const target = createStore({
      url,
      credentials: admin,
      ca: caCertificate,
      indexPrefix,
      embedDimensions: 384,
    }).client;
    const targetRepo = join(await repoOf(target), location);
    cpSync(sourceRepo, targetRepo, { recursive: true });
    const bytes = Number((await run("du", ["-sb", targetRepo])).stdout.split("\t")[0]);

    // 3. Registered read-only there, restored by the cluster's administrator.
    const restoreStarted = Date.now();
    // `readonly` is the fs repository's setting (the client's types know only read_only, of other kinds).
    await target.transport.request({
      method: "PUT",
      path: `/_snapshot/${location}`,
      body: { type: "fs", settings: { location: targetRepo, readonly: true } },
    });
    await target.snapshot.restore({
      repository: location,
      snapshot: "household",
      wait_for_completion: true,
      body: { indices: `${indexPrefix}-*`, include_global_state: false },
    });
    const restoreMs = Date.now() - restoreStarted;
    console.log(
      `moved ${events.length} events (${sourceCount} documents, ${(bytes / 1e6).toFixed(1)} MB snapshot): snapshot ${snapshotMs} ms, restore ${restoreMs} ms`,
    );

    // 4. Cortex, now on the external cluster with its own least-privilege user, finds what it knew.
    const moved = await cortexLikeThePod(caCertificate, opensearch.endpoints.password, indexPrefix);
    try {
      await moved.cortex.initialized;
      expect((await moved.cortex.store.client.count({ index: `${indexPrefix}-*` })).body.count).toBe(
        sourceCount,
      );
      const fact = corpus
        .flatMap((conversation) => conversation.sessions.flatMap((session) => session.turns))
        .find((turn) => turn.facts.length > 0);
      const statement = fact?.facts[0]?.statement ?? "";
      const answer = await moved.inject({
        method: "POST",
        url: "/retrieve",
        headers: bearer("gateway"),
        payload: {
          principal: { userId: fact?.userId ?? "", householdId: "home", agentId: "main" },
          requestText: statement,
          tokenBudget: 800,
        },
      });
      expect(answer.statusCode, answer.body).toBe(200);
      expect(answer.body).toContain(statement.slice(0, 40));
    } finally {
      await moved.close();
      await target.snapshot.deleteRepository({ repository: location });
      await sourceClient.snapshot.delete({ repository: location, snapshot: "household" });
      await sourceClient.snapshot.deleteRepository({ repository: location });
      await sourceClient.indices.delete({ index: `${indexPrefix}-*` });
    }
  });
});
