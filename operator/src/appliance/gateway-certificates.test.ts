import { createPrivateKey, X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube-client.js";
import { gatewayTls } from "./children/gateway-expose.js";
import {
  ensureOperatorCertificates,
  issueApplianceCa,
  issueServingCertificate,
  servingCertificateDue,
  servingCertificateLifetimeMs,
} from "./gateway-certificates.js";
import { applianceContext } from "./testing/context.js";

const host = "moltbox.home.arpa";
const now = Date.parse("2026-11-27T12:00:00Z");
const day = 24 * 60 * 60 * 1000;
const ca = issueApplianceCa("Remram test CA", now);

describe("the operator's own CA and serving certificate", () => {
  it("makes a CA that may sign server certificates only, and a certificate for the host it signs", () => {
    const authority = new X509Certificate(ca.certificate);
    expect(authority.ca).toBe(true);
    expect(authority.subject).toBe("CN=Remram test CA");
    const serving = issueServingCertificate(host, ca, now);
    const certificate = new X509Certificate(serving.certificate);
    expect(certificate.ca).toBe(false);
    expect(certificate.checkHost(host)).toBe(host);
    expect(certificate.checkHost("other.home.arpa")).toBeUndefined();
    expect(certificate.verify(authority.publicKey)).toBe(true);
    // The key that goes with it, in the Secret's tls.key.
    expect(certificate.checkPrivateKey(createPrivateKey(serving.key))).toBe(true);
    expect(Date.parse(certificate.validTo) - now).toBe(servingCertificateLifetimeMs);
    expect(certificate.keyUsage).toContain("1.3.6.1.5.5.7.3.1");
  });

  it("is issued again when missing, for another host, from another CA, or past two thirds of its lifetime", () => {
    const serving = issueServingCertificate(host, ca, now).certificate;
    expect(servingCertificateDue(serving, ca.certificate, host, now + day)).toBe(false);
    expect(servingCertificateDue(undefined, ca.certificate, host, now)).toBe(true);
    expect(servingCertificateDue("not a certificate", ca.certificate, host, now)).toBe(true);
    expect(servingCertificateDue(serving, ca.certificate, "other.home.arpa", now)).toBe(true);
    expect(servingCertificateDue(serving, issueApplianceCa("another CA", now).certificate, host, now)).toBe(
      true,
    );
    expect(servingCertificateDue(serving, ca.certificate, host, now + 61 * day)).toBe(true);
  });
});

describe("ensureOperatorCertificates", () => {
  const ctx = applianceContext({ gateway: { expose: { type: "Ingress", ingress: { host } } } });
  const tls = gatewayTls(ctx, false);
  const fakeClient = () => {
    const secrets = new Map<string, KubeObject>();
    const applied: string[] = [];
    return {
      secrets,
      applied,
      client: {
        get: async <T>(path: string) => secrets.get(path.split("/").at(-1) ?? "") as T | undefined,
        apply: async <T extends KubeObject>(object: T): Promise<T> => {
          applied.push(object.metadata.name);
          secrets.set(object.metadata.name, object);
          return object;
        },
      },
    };
  };
  const decoded = (secret: KubeObject | undefined, key: string) =>
    Buffer.from((secret as unknown as { data: Record<string, string> }).data[key] ?? "", "base64").toString();

  it("makes the CA once and keeps it, issues the serving Secret, and writes nothing when both are in order", async () => {
    const fake = fakeClient();
    await ensureOperatorCertificates(fake.client, ctx, tls, host, now);
    expect(fake.applied).toEqual(["box-gateway-ca", "box-gateway-tls"]);
    const caPem = decoded(fake.secrets.get("box-gateway-ca"), "tls.crt");
    const tlsSecret = fake.secrets.get("box-gateway-tls");
    expect(tlsSecret).toMatchObject({
      type: "kubernetes.io/tls",
      metadata: { ownerReferences: [{ name: "box" }] },
    });
    expect(decoded(tlsSecret, "ca.crt")).toBe(caPem);
    expect(
      new X509Certificate(decoded(tlsSecret, "tls.crt")).verify(new X509Certificate(caPem).publicKey),
    ).toBe(true);

    await ensureOperatorCertificates(fake.client, ctx, tls, host, now + day);
    expect(fake.applied).toHaveLength(2);
    // Renewal at two thirds: a new serving certificate from the same CA, which devices already trust.
    await ensureOperatorCertificates(fake.client, ctx, tls, host, now + 61 * day);
    expect(fake.applied).toEqual(["box-gateway-ca", "box-gateway-tls", "box-gateway-tls"]);
    expect(decoded(fake.secrets.get("box-gateway-ca"), "tls.crt")).toBe(caPem);
  });

  it("does nothing for a certificate that is not the operator's to issue", async () => {
    const fake = fakeClient();
    const provided = applianceContext({
      gateway: { expose: { type: "Ingress", ingress: { host, tls: { secretName: "mine" } } } },
    });
    await ensureOperatorCertificates(fake.client, provided, gatewayTls(provided, false), host, now);
    expect(fake.applied).toEqual([]);
  });
});
