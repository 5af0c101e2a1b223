/**
 * The operator's own CA for the gateway's Ingress when cert-manager is not installed (spec.gateway.expose.ingress
 * with TLS and neither a Secret nor an issuer named): a CA of the appliance's own, made once and kept (Secret
 * `<name>-gateway-ca`, 10 years), and the serving certificate for the host it signs (Secret `<name>-gateway-tls`,
 * 90 days, renewed past two thirds of its lifetime or when the host changes). Keys come from node:crypto; node-forge
 * builds and signs the certificates (node:crypto reads certificates but cannot make one). A household trusts the
 * CA's certificate, which the appliance publishes in status.gateway.caCertificate; its key never leaves the Secret.
 */
import { generateKeyPairSync, randomBytes, X509Certificate } from "node:crypto";
import forge from "node-forge";
import type { Cache } from "../runtime/cache.js";
import { type KubeClient, type KubeObject, resourcePath } from "../runtime/kube-client.js";
import { type GatewayTls, gatewayIngressSpec, gatewayTls } from "./children/gateway-expose.js";
import { type ApplianceContext, childMeta } from "./children/shared.js";
import { certificateAge, decodeSecretValue, deleteUnwantedExposure } from "./gateway-access.js";

const day = 24 * 60 * 60 * 1000;
export const operatorCaLifetimeMs = 3650 * day;
export const servingCertificateLifetimeMs = 90 * day;
/** Clocks on a home network drift; a certificate valid from a minute ago is not refused by one running behind. */
const backdateMs = 60 * 1000;

export interface PemPair {
  certificate: string;
  key: string;
}

function rsaKeys(): { publicKey: string; privateKey: string } {
  return generateKeyPairSync("rsa", {
    modulusLength: 2048,
    publicKeyEncoding: { type: "spki", format: "pem" },
    privateKeyEncoding: { type: "pkcs8", format: "pem" },
  });
}

function serialNumber(): string {
  // Positive (leading bit clear) and unique: 16 random bytes.
  const bytes = randomBytes(16);
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return bytes.toString("hex");
}

function sign(certificate: forge.pki.Certificate, privateKeyPem: string): void {
  certificate.sign(forge.pki.privateKeyFromPem(privateKeyPem), forge.md.sha256.create());
}

/** A self-signed CA that may sign server certificates only (path length 0). */
export function issueApplianceCa(commonName: string, nowMs: number): PemPair {
  const keys = rsaKeys();
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(keys.publicKey);
  certificate.serialNumber = serialNumber();
  certificate.validity.notBefore = new Date(nowMs - backdateMs);
  certificate.validity.notAfter = new Date(nowMs + operatorCaLifetimeMs);
  const name = [{ name: "commonName", value: commonName }];
  certificate.setSubject(name);
  certificate.setIssuer(name);
  certificate.setExtensions([
    { name: "basicConstraints", cA: true, pathLenConstraint: 0, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  sign(certificate, keys.privateKey);
  return { certificate: forge.pki.certificateToPem(certificate), key: keys.privateKey };
}

/** The serving certificate for `host`, signed by `ca`. */
export function issueServingCertificate(host: string, ca: PemPair, nowMs: number): PemPair {
  const keys = rsaKeys();
  const caCertificate = forge.pki.certificateFromPem(ca.certificate);
  const certificate = forge.pki.createCertificate();
  certificate.publicKey = forge.pki.publicKeyFromPem(keys.publicKey);
  certificate.serialNumber = serialNumber();
  certificate.validity.notBefore = new Date(nowMs - backdateMs);
  certificate.validity.notAfter = new Date(nowMs + servingCertificateLifetimeMs);
  certificate.setSubject([{ name: "commonName", value: host }]);
  certificate.setIssuer(caCertificate.subject.attributes);
  certificate.setExtensions([
    { name: "basicConstraints", cA: false, critical: true },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    { name: "extKeyUsage", serverAuth: true },
    { name: "subjectAltName", altNames: [{ type: 2, value: host }] },
  ]);
  sign(certificate, ca.key);
  return { certificate: forge.pki.certificateToPem(certificate), key: keys.privateKey };
}

/**
 * Whether the serving certificate must be issued again: missing or unreadable, not for `host`, not signed by the
 * CA in force, expired, not yet valid, or past two thirds of its lifetime.
 */
export function servingCertificateDue(
  serving: string | undefined,
  caCertificate: string,
  host: string,
  nowMs: number,
): boolean {
  if (serving === undefined) return true;
  try {
    const certificate = new X509Certificate(serving);
    const ca = new X509Certificate(caCertificate);
    if (certificate.checkHost(host) === undefined || !certificate.verify(ca.publicKey)) return true;
    return (
      certificateAge(nowMs, Date.parse(certificate.validFrom), Date.parse(certificate.validTo)) !== "valid"
    );
  } catch {
    return true;
  }
}

function tlsSecret(ctx: ApplianceContext, name: string, data: Record<string, string>): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: childMeta(ctx, "gateway", name),
    type: "kubernetes.io/tls",
    data: Object.fromEntries(
      Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString("base64")]),
    ),
  } as KubeObject;
}

/**
 * In `operator-ca` mode: the CA Secret made once and kept (a new CA would make every device trust it again), and
 * the serving Secret issued whenever servingCertificateDue says so. Writes nothing when both are in order.
 */
export async function ensureOperatorCertificates(
  client: Pick<KubeClient, "get" | "apply">,
  ctx: ApplianceContext,
  tls: GatewayTls,
  host: string,
  nowMs: number,
): Promise<void> {
  if (tls.mode !== "operator-ca") return;
  const secretPath = (name: string) => resourcePath("v1", "Secret", ctx.namespace, name);
  const caSecret = await client.get<KubeObject>(secretPath(tls.caSecretName));
  let ca: PemPair | undefined;
  const caCertificate = decodeSecretValue(caSecret, "tls.crt");
  const caKey = decodeSecretValue(caSecret, "tls.key");
  if (caCertificate !== undefined && caKey !== undefined) ca = { certificate: caCertificate, key: caKey };
  else {
    ca = issueApplianceCa(`Remram appliance ${ctx.namespace}/${ctx.name} CA`, nowMs);
    await client.apply(
      tlsSecret(ctx, tls.caSecretName, {
        "tls.crt": ca.certificate,
        "tls.key": ca.key,
        "ca.crt": ca.certificate,
      }),
    );
  }
  const serving = decodeSecretValue(await client.get<KubeObject>(secretPath(tls.secretName)), "tls.crt");
  if (!servingCertificateDue(serving, ca.certificate, host, nowMs)) return;
  const issued = issueServingCertificate(host, ca, nowMs);
  await client.apply(
    tlsSecret(ctx, tls.secretName, {
      "tls.crt": issued.certificate,
      "tls.key": issued.key,
      "ca.crt": ca.certificate,
    }),
  );
}

/**
 * After the children are applied: what an earlier exposure left and the spec no longer wants goes, and in
 * operator-ca mode the CA and the serving certificate are made or renewed.
 */
export async function settleExposure(
  client: Pick<KubeClient, "get" | "apply" | "delete">,
  children: (kind: string) => Cache<KubeObject> | undefined,
  ctx: ApplianceContext,
  nowMs: number,
): Promise<void> {
  await deleteUnwantedExposure(client, children, ctx);
  const ingress = gatewayIngressSpec(ctx);
  if (ingress === undefined) return;
  await ensureOperatorCertificates(
    client,
    ctx,
    gatewayTls(ctx, ctx.certManagerInstalled ?? false),
    ingress.host,
    nowMs,
  );
}
