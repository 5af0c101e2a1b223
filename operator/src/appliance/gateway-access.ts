/**
 * The reconciler's part of reaching the gateway (spec.gateway.expose) and of its chat channels
 * (spec.gateway.channels): what it reads from the cluster (cert-manager's presence, the TLS Secret, the channels'
 * token Secrets), the conditions GatewayExposed and ChannelsReady, and status.gateway. Neither condition blocks
 * Ready: the gateway works inside the cluster either way.
 */
import { X509Certificate } from "node:crypto";
import type { SupportedChannel } from "../api/v1alpha1/gateway-channels.js";
import type { GatewayStatus } from "../api/v1alpha1/gateway-expose.js";
import { ApplianceReason, type RemramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import type { Cache } from "../runtime/cache.js";
import type { ConditionInput } from "../runtime/conditions.js";
import { type KubeClient, type KubeObject, resourcePath } from "../runtime/kube-client.js";
import { appBasePath } from "./children/app.js";
import {
  certManagerCertificateCrd,
  type GatewayTls,
  gatewayIngressSpec,
  gatewayTls,
  gatewayTrustedProxies,
  unwantedExposure,
} from "./children/gateway-expose.js";
import { type ApplianceContext, childName, type IngressProxies } from "./children/shared.js";
import { activeChannels, channelTokenRefs, memberPeers } from "./openclaw-channels.js";

export function decodeSecretValue(secret: KubeObject | undefined, key: string): string | undefined {
  const data = (secret as { data?: Record<string, string> } | undefined)?.data;
  const value = data?.[key];
  return value === undefined ? undefined : Buffer.from(value, "base64").toString("utf8");
}

/** A user's Secret key: the Secret's resourceVersion when the key holds a value, else what is missing. */
export async function secretKeyState(
  client: Pick<KubeClient, "get">,
  namespace: string,
  ref: { name: string; key: string },
  field: string,
): Promise<{ version?: string; problem?: string }> {
  const secret = await client.get<KubeObject>(`/api/v1/namespaces/${namespace}/secrets/${ref.name}`);
  if (secret === undefined) return { problem: `Secret ${ref.name} (${field}) does not exist` };
  if (!decodeSecretValue(secret, ref.key)) return { problem: `Secret ${ref.name} has no key ${ref.key}` };
  return { version: secret.metadata.resourceVersion ?? "unknown" };
}

/** spec.escalation.cloud's key: its version, or what keeps it from the gateway; nothing without escalation. */
export async function cloudKeyState(
  client: Pick<KubeClient, "get">,
  namespace: string,
  spec: RemramApplianceSpec,
): Promise<{ version?: string; problem?: string }> {
  const cloud = spec.escalation.cloud;
  if (cloud === undefined || !spec.escalation.enabled) return {};
  return secretKeyState(client, namespace, cloud.apiKeySecretRef, "spec.escalation.cloud.apiKeySecretRef");
}

/** Each configured channel's token: the versions found, and what is missing for the others. */
export async function channelTokens(
  client: Pick<KubeClient, "get">,
  namespace: string,
  spec: RemramApplianceSpec,
): Promise<{ versions: Partial<Record<SupportedChannel, string>>; problems: string[] }> {
  const versions: Partial<Record<SupportedChannel, string>> = {};
  const problems: string[] = [];
  for (const { channel, ref } of channelTokenRefs(spec.gateway.channels)) {
    const state = await secretKeyState(client, namespace, ref, `spec.gateway.channels.${channel}`);
    if (state.version !== undefined) versions[channel] = state.version;
    else problems.push(`${channel}: ${state.problem}`);
  }
  return { versions, problems };
}

/** How long a finding about an optional API is trusted: installing cert-manager is noticed within this time. */
export const optionalApiTtlMs = 5 * 60_000;

/** Whether cert-manager's Certificate CRD is served, by a GET of the CRD, remembered for optionalApiTtlMs. */
export class CertManagerProbe {
  private known?: { installed: boolean; at: number };
  constructor(
    private readonly client: Pick<KubeClient, "get">,
    private readonly now: () => number,
  ) {}

  async installed(): Promise<boolean> {
    const now = this.now();
    if (this.known !== undefined && now - this.known.at < optionalApiTtlMs) return this.known.installed;
    const crd = await this.client.get<
      KubeObject & { status?: { conditions?: { type: string; status: string }[] } }
    >(`/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${certManagerCertificateCrd}`);
    const installed =
      crd?.status?.conditions?.some(
        (condition) => condition.type === "Established" && condition.status === "True",
      ) ?? false;
    this.known = { installed, at: now };
    return installed;
  }
}

/** A certificate's state at `now`: renewal is due past two thirds of its lifetime. */
export function certificateAge(
  nowMs: number,
  notBeforeMs: number,
  notAfterMs: number,
): "not-yet-valid" | "valid" | "renewal-due" | "expired" {
  if (nowMs >= notAfterMs) return "expired";
  if (nowMs < notBeforeMs) return "not-yet-valid";
  return nowMs >= notBeforeMs + ((notAfterMs - notBeforeMs) * 2) / 3 ? "renewal-due" : "valid";
}

/** What the TLS Secret holds, read by the reconciler: its serving certificate and CA (public parts only). */
export interface TlsSecretObservation {
  /** The Secret was found. */
  exists: boolean;
  certificate?: string;
  ca?: string;
}

export async function observeTlsSecret(
  client: Pick<KubeClient, "get">,
  namespace: string,
  tls: GatewayTls,
): Promise<TlsSecretObservation | undefined> {
  if (tls.mode === "off") return undefined;
  const secret = await client.get<KubeObject>(`/api/v1/namespaces/${namespace}/secrets/${tls.secretName}`);
  const certificate = decodeSecretValue(secret, "tls.crt");
  const ca = decodeSecretValue(secret, "ca.crt");
  return {
    exists: secret !== undefined,
    ...(certificate ? { certificate } : {}),
    ...(ca ? { ca } : {}),
  };
}

interface ExposureInput {
  name: string;
  spec: RemramApplianceSpec;
  tls: GatewayTls;
  secret?: TlsSecretObservation;
  /** The node port Kubernetes gave the Service (type NodePort). */
  nodePort?: number;
  ingressProxies?: IngressProxies;
  now: number;
}

type Parsed = { notBefore: number; notAfter: number; coversHost: boolean } | undefined;

function parseCertificate(pem: string | undefined, host: string): Parsed {
  if (pem === undefined) return undefined;
  try {
    const certificate = new X509Certificate(pem);
    return {
      notBefore: Date.parse(certificate.validFrom),
      notAfter: Date.parse(certificate.validTo),
      coversHost: certificate.checkHost(host) !== undefined,
    };
  } catch {
    return undefined;
  }
}

/**
 * GatewayExposed and status.gateway from what was observed; with remram-app on, status.gateway.appUrl too: the app
 * is served on the gateway's host under appBasePath (gatewayIngress routes it there).
 */
export function gatewayExposure(input: ExposureInput): { condition: ConditionInput; status?: GatewayStatus } {
  const exposure = gatewayExposureOf(input);
  if (exposure.status?.url === undefined || !input.spec.app.enabled) return exposure;
  return {
    ...exposure,
    status: { ...exposure.status, appUrl: new URL(appBasePath, exposure.status.url).href },
  };
}

function gatewayExposureOf(input: ExposureInput): { condition: ConditionInput; status?: GatewayStatus } {
  const type = "GatewayExposed";
  const expose = input.spec.gateway.expose;
  const service = childName(input.name, "gateway");
  const message = (text: string) => text.slice(0, 1024);
  const ingress = gatewayIngressSpec(input);
  if (ingress === undefined) {
    const where =
      expose.type === "ClusterIP"
        ? "inside the cluster only (Service type ClusterIP)"
        : expose.type === "NodePort"
          ? `on every node's address at port ${input.nodePort ?? expose.nodePort ?? "(not assigned yet)"}`
          : `on the load balancer's address (k3s: the node's) at port 18789; kubectl get service ${service}`;
    return {
      condition: {
        type,
        status: "True",
        reason: ApplianceReason.ServiceExposed,
        message: message(`the gateway is reachable ${where}`),
      },
    };
  }
  const { tls } = input;
  const plain = tls.mode === "off";
  const url = `${plain ? "http" : "https"}://${ingress.host}/`;
  if (gatewayTrustedProxies(input).length === 0) {
    const where = input.ingressProxies
      ? `no endpoints of Service ${input.ingressProxies.service} (the chart's ingressController) were found`
      : "the operator is not told where the ingress controller runs (the chart's ingressController is empty)";
    return {
      condition: {
        type,
        status: "False",
        reason: ApplianceReason.IngressProxyUnknown,
        message: message(
          `the gateway refuses requests forwarded by the ingress controller until it knows the controller's address: ${where}; set spec.gateway.expose.ingress.trustedProxies`,
        ),
      },
      status: { url },
    };
  }
  if (plain) {
    return {
      condition: {
        type,
        status: "True",
        reason: ApplianceReason.IngressReady,
        message: message(
          `${url} through ingress class ${ingress.className}, plain HTTP: the token crosses the LAN in clear`,
        ),
      },
      status: { url },
    };
  }
  const secret = input.secret;
  const parsed = parseCertificate(secret?.certificate, ingress.host);
  const caStatus = secret?.ca === undefined ? {} : { caCertificate: secret.ca.slice(0, 16384) };
  const notAfter =
    parsed === undefined
      ? {}
      : { certificateNotAfter: new Date(parsed.notAfter).toISOString().replace(/\.\d{3}Z$/, "Z") };
  const status: GatewayStatus = { url, ...caStatus, ...notAfter };
  const failing = (
    reason: ApplianceReason,
    text: string,
    conditionStatus: "False" | "Unknown" = "False",
  ) => ({
    condition: { type, status: conditionStatus, reason, message: message(text) },
    status,
  });
  if (parsed === undefined) {
    if (tls.mode === "unavailable")
      return failing(
        ApplianceReason.CertManagerMissing,
        `spec.gateway.expose.ingress.tls.issuerRef names a cert-manager issuer, but cert-manager is not installed (no ${certManagerCertificateCrd} CRD)`,
      );
    if (tls.mode === "provided")
      return failing(
        ApplianceReason.CertificateMissing,
        secret?.exists
          ? `Secret ${tls.secretName} holds no readable tls.crt`
          : `Secret ${tls.secretName} (spec.gateway.expose.ingress.tls.secretName) does not exist`,
      );
    return failing(
      ApplianceReason.CertificatePending,
      tls.mode === "issuer"
        ? `cert-manager has not issued ${tls.secretName} for ${ingress.host} yet (kubectl describe certificate ${tls.secretName})`
        : `the operator has not issued ${tls.secretName} for ${ingress.host} yet`,
      "Unknown",
    );
  }
  if (!parsed.coversHost)
    return failing(
      ApplianceReason.CertificateInvalid,
      `the certificate in Secret ${tls.secretName} is not for ${ingress.host}`,
    );
  const age = certificateAge(input.now, parsed.notBefore, parsed.notAfter);
  const until = new Date(parsed.notAfter).toISOString();
  if (age === "expired" || age === "not-yet-valid")
    return failing(
      ApplianceReason.CertificateInvalid,
      `the certificate in Secret ${tls.secretName} ${age === "expired" ? `expired at ${until}` : "is not valid yet"}${tls.mode === "provided" ? ": renew it" : ""}`,
    );
  const renew =
    age === "renewal-due"
      ? tls.mode === "provided"
        ? `; it is past two thirds of its lifetime: renew Secret ${tls.secretName}`
        : `; it is past two thirds of its lifetime and ${tls.mode === "issuer" ? "cert-manager" : "the operator"} renews it`
      : "";
  return {
    condition: {
      type,
      status: "True",
      reason: ApplianceReason.IngressReady,
      message: message(
        `${url} through ingress class ${ingress.className}, certificate valid until ${until}${renew}`,
      ),
    },
    status,
  };
}

/** ChannelsReady: which channels answer the household, and which wait for their token. */
export function channelsCondition(
  spec: RemramApplianceSpec,
  versions: Partial<Record<SupportedChannel, string>>,
  problems: readonly string[],
): ConditionInput {
  const type = "ChannelsReady";
  const configured = channelTokenRefs(spec.gateway.channels);
  if (configured.length === 0)
    return {
      type,
      status: "False",
      reason: ApplianceReason.ChannelsOff,
      message: "no chat channel configured",
    };
  const active = activeChannels(spec.gateway.channels, Object.keys(versions) as SupportedChannel[]);
  const answering = active
    .map((channel) => `${channel} (${memberPeers(spec.household, channel).length} member identities)`)
    .join(", ");
  if (problems.length > 0)
    return {
      type,
      status: "False",
      reason: ApplianceReason.ChannelTokenMissing,
      message:
        `${problems.join("; ")}: such a channel stays off until its token is there${answering ? `; on: ${answering}` : ""}`.slice(
          0,
          1024,
        ),
    };
  return {
    type,
    status: "True",
    reason: ApplianceReason.ChannelsConfigured,
    message: `answering the household's direct messages on ${answering}`.slice(0, 1024),
  };
}

type ChildCaches = (kind: string) => Cache<KubeObject> | undefined;

/** Deletes what an earlier exposure left that the spec no longer wants; only objects this appliance controls. */
export async function deleteUnwantedExposure(
  client: Pick<KubeClient, "get" | "delete">,
  children: ChildCaches,
  ctx: ApplianceContext,
): Promise<void> {
  for (const leftover of unwantedExposure(ctx)) {
    const path = resourcePath(leftover.apiVersion, leftover.kind, ctx.namespace, leftover.name);
    const cache = children(leftover.kind);
    const live = cache ? cache.get(ctx.namespace, leftover.name) : await client.get<KubeObject>(path);
    if (live?.metadata.ownerReferences?.some((owner) => owner.uid === ctx.owner.uid))
      await client.delete(path);
  }
}

/** GatewayExposed and status.gateway for the context: the live Service's node port, the TLS Secret's certificate. */
export async function observeExposure(
  client: Pick<KubeClient, "get">,
  children: ChildCaches,
  ctx: ApplianceContext,
  now: number,
): Promise<{ condition: ConditionInput; status?: GatewayStatus }> {
  const tls = gatewayTls(ctx, ctx.certManagerInstalled ?? false);
  const service = children("Service")?.get(ctx.namespace, childName(ctx.name, "gateway")) as
    | { spec?: { ports?: { nodePort?: number }[] } }
    | undefined;
  const nodePort = service?.spec?.ports?.[0]?.nodePort;
  const secret = await observeTlsSecret(client, ctx.namespace, tls);
  return gatewayExposure({
    name: ctx.name,
    spec: ctx.spec,
    tls,
    ...(secret === undefined ? {} : { secret }),
    ...(nodePort === undefined ? {} : { nodePort }),
    ...(ctx.ingressProxies === undefined ? {} : { ingressProxies: ctx.ingressProxies }),
    now,
  });
}
