/**
 * How the gateway is reached from the LAN (spec.gateway.expose): its Service (ClusterIP, NodePort, LoadBalancer),
 * and for type Ingress the Ingress and where its certificate comes from. Pure: the reconciler decides whether
 * cert-manager is installed and passes it in the context.
 */
import type { GatewayIngressSpec } from "../../api/v1alpha1/gateway-expose.js";
import type { KubeObject } from "../../runtime/kube-client.js";
import { appBasePath, appName } from "./app.js";
import { type ApplianceContext, childMeta, childName, ports, selectorLabels } from "./shared.js";

export const certManagerApiVersion = "cert-manager.io/v1";
/** cert-manager's Certificate CRD: its presence is how the operator tells cert-manager is installed. */
export const certManagerCertificateCrd = "certificates.cert-manager.io";

/** Traefik's annotations that put the route on the HTTPS entrypoint only (k3s names it websecure). */
export const traefikHttpsOnly = {
  "traefik.ingress.kubernetes.io/router.entrypoints": "websecure",
  "traefik.ingress.kubernetes.io/router.tls": "true",
} as const;

/** The serving certificate cert-manager issues from the spec's issuer: 90 days, renewed 30 days before it ends. */
export const servingCertificateDuration = "2160h";
export const servingCertificateRenewBefore = "720h";

/** Where the Ingress's certificate comes from. */
export type GatewayTls =
  /** No Ingress, or an Ingress on plain HTTP. */
  | { mode: "off" }
  /** A Secret the user provides. */
  | { mode: "provided"; secretName: string }
  /** cert-manager, with the spec's issuer. */
  | { mode: "issuer"; secretName: string; issuerRef: NonNullable<GatewayIngressSpec["tls"]["issuerRef"]> }
  /** The operator's own CA of the appliance, kept in <name>-gateway-ca (gateway-certificates.ts). */
  | { mode: "operator-ca"; secretName: string; caSecretName: string }
  /** An issuer is named but cert-manager is not installed: the Ingress names <name>-gateway-tls, which nobody fills. */
  | { mode: "unavailable"; secretName: string };

export function gatewayIngressSpec(ctx: Pick<ApplianceContext, "spec">): GatewayIngressSpec | undefined {
  const expose = ctx.spec.gateway.expose;
  return expose.type === "Ingress" ? expose.ingress : undefined;
}

/**
 * The addresses the gateway takes X-Forwarded-For from: only behind an Ingress, the spec's list or else the ingress
 * controller's pods as the operator found them. Never wider: every other pod-network caller (the kubelet's probes
 * from the node's bridge address among them) must stay a direct client, or OpenClaw refuses it as an unattributed
 * proxy.
 */
export function gatewayTrustedProxies(ctx: Pick<ApplianceContext, "spec" | "ingressProxies">): string[] {
  const ingress = gatewayIngressSpec(ctx);
  if (ingress === undefined) return [];
  return [...(ingress.trustedProxies ?? ctx.ingressProxies?.addresses ?? [])];
}

/** The certificate plan for the spec, given whether cert-manager's Certificate CRD is served. */
export function gatewayTls(
  ctx: Pick<ApplianceContext, "name" | "spec">,
  certManagerInstalled: boolean,
): GatewayTls {
  const ingress = gatewayIngressSpec(ctx);
  if (ingress === undefined || !ingress.tls.enabled) return { mode: "off" };
  if (ingress.tls.secretName !== undefined) return { mode: "provided", secretName: ingress.tls.secretName };
  const secretName = childName(ctx.name, "gateway-tls");
  const issuerRef = ingress.tls.issuerRef;
  // By default the operator's own CA: it needs nothing installed, and a CA that never changes keeps every device
  // that trusts it working. cert-manager only when the spec names one of its issuers.
  if (issuerRef === undefined)
    return { mode: "operator-ca", secretName, caSecretName: childName(ctx.name, "gateway-ca") };
  return certManagerInstalled
    ? { mode: "issuer", secretName, issuerRef }
    : { mode: "unavailable", secretName };
}

/** The gateway's Service, of the type spec.gateway.expose asks for (an Ingress uses the ClusterIP Service). */
export function gatewayService(ctx: ApplianceContext): KubeObject {
  const { type, nodePort } = ctx.spec.gateway.expose;
  const serviceType = type === "Ingress" ? "ClusterIP" : type;
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMeta(ctx, "gateway"),
    spec: {
      type: serviceType,
      selector: selectorLabels(ctx.name, "gateway"),
      ports: [
        {
          name: "http",
          port: ports.gateway,
          targetPort: "http",
          ...(serviceType === "NodePort" && nodePort !== undefined ? { nodePort } : {}),
        },
      ],
    },
  } as KubeObject;
}

function certManagerObject(ctx: ApplianceContext, kind: string, name: string, spec: unknown): KubeObject {
  return {
    apiVersion: certManagerApiVersion,
    kind,
    metadata: childMeta(ctx, "gateway", name),
    spec,
  } as KubeObject;
}

/** cert-manager's objects for the plan: the serving Certificate from the spec's issuer. */
export function certManagerObjects(ctx: ApplianceContext, tls: GatewayTls): KubeObject[] {
  const ingress = gatewayIngressSpec(ctx);
  if (ingress === undefined || tls.mode !== "issuer") return [];
  return [
    certManagerObject(ctx, "Certificate", tls.secretName, {
      secretName: tls.secretName,
      dnsNames: [ingress.host],
      duration: servingCertificateDuration,
      renewBefore: servingCertificateRenewBefore,
      privateKey: { algorithm: "ECDSA", size: 256, rotationPolicy: "Always" },
      issuerRef: tls.issuerRef,
    }),
  ];
}

/**
 * The Ingress for type Ingress: every path of the host to the gateway's Service, HTTPS only when TLS is on; with
 * remram-app on, its base path to the app's Service (the longer prefix wins, so the gateway keeps everything else).
 */
export function gatewayIngress(ctx: ApplianceContext, tls: GatewayTls): KubeObject | undefined {
  const ingress = gatewayIngressSpec(ctx);
  if (ingress === undefined) return undefined;
  const secretName = tls.mode === "off" ? undefined : tls.secretName;
  const meta = childMeta(ctx, "gateway");
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: secretName === undefined ? meta : { ...meta, annotations: { ...traefikHttpsOnly } },
    spec: {
      ingressClassName: ingress.className,
      ...(secretName === undefined ? {} : { tls: [{ hosts: [ingress.host], secretName }] }),
      rules: [
        {
          host: ingress.host,
          http: {
            paths: [
              ...(ctx.spec.app.enabled
                ? [
                    {
                      path: appBasePath,
                      pathType: "Prefix",
                      backend: { service: { name: appName(ctx.name), port: { name: "http" } } },
                    },
                  ]
                : []),
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: childName(ctx.name, "gateway"), port: { name: "http" } } },
              },
            ],
          },
        },
      ],
    },
  } as KubeObject;
}

/** Everything of the exposure beside the Service: the Ingress and cert-manager's objects. */
export function buildGatewayExposure(ctx: ApplianceContext): KubeObject[] {
  const tls = gatewayTls(ctx, ctx.certManagerInstalled ?? false);
  const ingress = gatewayIngress(ctx, tls);
  return [...(ingress === undefined ? [] : [ingress]), ...certManagerObjects(ctx, tls)];
}

/**
 * Objects of an earlier exposure the current spec no longer wants (the type left Ingress, the certificate source
 * changed): the reconciler deletes those that exist. Never a Secret: devices that trust the CA keep working if the
 * Ingress is wanted again.
 */
export function unwantedExposure(
  ctx: ApplianceContext,
): { apiVersion: string; kind: string; name: string }[] {
  const wanted = new Set(buildGatewayExposure(ctx).map((object) => `${object.kind}/${object.metadata.name}`));
  const candidates = [
    { apiVersion: "networking.k8s.io/v1", kind: "Ingress", name: childName(ctx.name, "gateway") },
    ...(ctx.certManagerInstalled
      ? [{ apiVersion: certManagerApiVersion, kind: "Certificate", name: childName(ctx.name, "gateway-tls") }]
      : []),
  ];
  return candidates.filter((candidate) => !wanted.has(`${candidate.kind}/${candidate.name}`));
}
