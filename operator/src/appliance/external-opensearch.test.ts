import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import type { KubeObject } from "../runtime/kube-client.js";
import {
  ExternalOpenSearchProbe,
  type ExternalTarget,
  externalOpenSearchCondition,
  externalProbeTtlMs,
  type ProbeOutcome,
} from "./external-opensearch.js";

const url = "https://search.lan:9200";
const pem = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n";

describe("OpenSearchReady of an external cluster", () => {
  const reasonOf = (outcome: ProbeOutcome) => externalOpenSearchCondition(url, outcome);

  it("is True once the cluster answers its health with the given credentials", () => {
    expect(reasonOf({ kind: "answered", status: 200, health: "green" })).toEqual({
      type: "OpenSearchReady",
      status: "True",
      reason: "OpenSearchConnected",
      message: `connected to ${url} (cluster health green)`,
    });
  });

  it("names a certificate the CA bundle does not vouch for, whichever way TLS says it", () => {
    for (const code of [
      "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
      "SELF_SIGNED_CERT_IN_CHAIN",
      "ERR_TLS_CERT_ALTNAME_INVALID",
      "CERT_HAS_EXPIRED",
    ]) {
      const condition = reasonOf({ kind: "failed", code, message: "x" });
      expect(condition).toMatchObject({ status: "False", reason: "OpenSearchCertificateUntrusted" });
      expect(condition.message).toContain("caSecretRef");
    }
  });

  it("tells refused credentials from a user without the role, and both from a cluster that is down", () => {
    expect(reasonOf({ kind: "answered", status: 401 })).toMatchObject({ reason: "OpenSearchUnauthorized" });
    expect(reasonOf({ kind: "answered", status: 403 })).toMatchObject({ reason: "OpenSearchForbidden" });
    expect(reasonOf({ kind: "failed", code: "ECONNREFUSED", message: "connect ECONNREFUSED" })).toMatchObject(
      {
        reason: "OpenSearchUnreachable",
        message: `${url} did not answer: connect ECONNREFUSED`,
      },
    );
    expect(reasonOf({ kind: "answered", status: 503 })).toMatchObject({
      status: "False",
      reason: "OpenSearchUnreachable",
    });
    expect(reasonOf({ kind: "secret", problem: "Secret os-ca (caSecretRef) does not exist" })).toMatchObject({
      reason: "OpenSearchSecretMissing",
      message: "Secret os-ca (caSecretRef) does not exist",
    });
  });
});

describe("asking an external cluster", () => {
  const spec = remramApplianceSpec.parse({
    opensearch: {
      mode: "external",
      external: { url, credentialsSecretRef: { name: "creds" }, caSecretRef: { name: "ca" } },
    },
  });
  const secret = (name: string, version: string, data: Record<string, string>): KubeObject =>
    ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name, namespace: "home", resourceVersion: version },
      data: Object.fromEntries(
        Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString("base64")]),
      ),
    }) as KubeObject;

  function setup(store: Map<string, KubeObject>) {
    let now = 1_000_000;
    const asked: ExternalTarget[] = [];
    const probe = new ExternalOpenSearchProbe(
      { get: async <T>(path: string) => store.get(path.split("/").at(-1) ?? "") as T | undefined },
      () => now,
      async (target) => {
        asked.push(target);
        return { kind: "answered", status: 200 };
      },
    );
    return { probe, asked, advance: (ms: number) => (now += ms) };
  }

  it("hands the Secrets' values to the request and their versions to Cortex's pod, and asks again only when due", async () => {
    const store = new Map([
      ["creds", secret("creds", "7", { username: "remram", password: "pw" })],
      ["ca", secret("ca", "9", { "ca.crt": pem })],
    ]);
    const { probe, asked, advance } = setup(store);
    const first = await probe.observe("home", "box", spec);
    expect(first).toMatchObject({ secretsVersion: "7/9", condition: { reason: "OpenSearchConnected" } });
    expect(asked).toEqual([
      { url, credentials: { username: "remram", password: "pw" }, ca: pem, version: "7/9" },
    ]);
    await probe.observe("home", "box", spec);
    expect(asked).toHaveLength(1);
    // A changed Secret is asked about at once; otherwise after the TTL.
    store.set("creds", secret("creds", "8", { username: "remram", password: "new" }));
    await probe.observe("home", "box", spec);
    expect(asked).toHaveLength(2);
    advance(externalProbeTtlMs);
    await probe.observe("home", "box", spec);
    expect(asked).toHaveLength(3);
  });

  it("says which Secret or key is missing without asking the cluster, and nothing for an embedded OpenSearch", async () => {
    const { probe, asked } = setup(new Map([["creds", secret("creds", "7", { username: "remram" })]]));
    expect((await probe.observe("home", "box", spec)).condition).toMatchObject({
      reason: "OpenSearchSecretMissing",
      message: "Secret creds needs both keys username and password",
    });
    const noCa = setup(new Map([["creds", secret("creds", "7", { username: "remram", password: "pw" })]]));
    expect((await noCa.probe.observe("home", "box", spec)).condition?.message).toBe(
      "Secret ca (caSecretRef) does not exist",
    );
    const notPem = setup(
      new Map([
        ["creds", secret("creds", "7", { username: "remram", password: "pw" })],
        ["ca", secret("ca", "9", { "ca.crt": "hello" })],
      ]),
    );
    expect((await notPem.probe.observe("home", "box", spec)).condition?.message).toBe(
      "Secret ca has no PEM certificate under key ca.crt",
    );
    expect(await probe.observe("home", "box", remramApplianceSpec.parse({}))).toEqual({});
    expect(asked).toEqual([]);
  });
});
