/**
 * spec.gateway.expose of a RemramAppliance: how the household reaches the gateway from the LAN, the way a k3s box
 * offers it: the Service as it is (ClusterIP), a NodePort, a LoadBalancer (k3s's ServiceLB answers it on the node's
 * address), or an Ingress served by the Traefik that k3s ships, with TLS. And status.gateway: where it is reached and
 * the certificate a household device trusts for it.
 */
import { z } from "zod";
import { dnsSubdomain, timestamp, withCel } from "./common.js";

export const gatewayExposeTypes = ["ClusterIP", "NodePort", "LoadBalancer", "Ingress"] as const;
export type GatewayExposeType = (typeof gatewayExposeTypes)[number];

/** Shown when a field of another exposure type is set (operator/test/admission.int.test.ts). */
export const nodePortRefusal = "nodePort applies only to type NodePort";
export const ingressRefusal =
  "ingress (with its host) is required when type is Ingress and forbidden otherwise";
export const tlsSourceRefusal =
  "secretName (a certificate you provide) and issuerRef (cert-manager issues one) exclude each other";
export const tlsDisabledRefusal = "secretName and issuerRef apply only when TLS is enabled";

const issuerRef = z
  .object({
    name: dnsSubdomain.describe("The cert-manager Issuer or ClusterIssuer."),
    kind: z.enum(["Issuer", "ClusterIssuer"]).default("Issuer"),
    group: z
      .string()
      .min(1)
      .max(253)
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/)
      .default("cert-manager.io"),
  })
  .strict();

const ingressTls = withCel(
  z
    .object({
      enabled: z
        .boolean()
        .default(true)
        .describe(
          "HTTPS only: the route is on Traefik's websecure entrypoint alone, so the gateway token never crosses the LAN in clear. false serves plain HTTP.",
        ),
      secretName: dnsSubdomain
        .optional()
        .describe(
          "A kubernetes.io/tls Secret you provide in the appliance's namespace (tls.crt, tls.key, and ca.crt if a private CA signed it). The operator then issues nothing.",
        ),
      issuerRef: issuerRef
        .optional()
        .describe(
          "A cert-manager issuer for the host's certificate (cert-manager must be installed). Unset, with cert-manager installed: the operator has cert-manager keep a CA of the appliance's own (Secret <name>-gateway-ca) and issue from it.",
        ),
    })
    .strict(),
  { rule: "!(has(self.secretName) && has(self.issuerRef))", message: tlsSourceRefusal },
  {
    rule: "self.enabled || (!has(self.secretName) && !has(self.issuerRef))",
    message: tlsDisabledRefusal,
  },
);

/** A host name as Ingress rules take it: a DNS-1123 subdomain, no wildcard. */
const hostName = dnsSubdomain.describe(
  "The name household devices use for the box, e.g. moltbox.home.arpa (the LAN's DNS or each device's hosts file points it at the box).",
);

const ingress = z
  .object({
    className: dnsSubdomain.default("traefik").describe("IngressClass; k3s ships Traefik as `traefik`."),
    host: hostName,
    tls: ingressTls.prefault({}),
    trustedProxies: z
      .array(
        z
          .string()
          .max(64)
          .regex(
            /^[0-9a-fA-F:.]+(\/[0-9]{1,3})?$/,
            "an IP address or CIDR, e.g. 192.168.1.10 or 10.42.0.7/32",
          ),
      )
      .min(1)
      .max(16)
      .optional()
      .describe(
        "The ingress controller's addresses (IPs or CIDRs): the gateway takes the client's address from X-Forwarded-For only from them and refuses forwarded requests from anyone else. Unset: the operator reads them from the ingress controller's Service endpoints (the chart's ingressController, k3s's kube-system/traefik) and follows its pods. Set it for a controller it cannot read, e.g. one on the host network (the node's address). Never the whole pod network: the kubelet's probes come from there.",
      ),
  })
  .strict();

export const gatewayExposeSpec = withCel(
  z
    .object({
      type: z
        .enum(gatewayExposeTypes)
        .default("ClusterIP")
        .describe(
          "ClusterIP: inside the cluster only. NodePort: on every node's address at nodePort. LoadBalancer: k3s's ServiceLB answers the gateway port (18789) on the node's address. Ingress: https://<host>/ through the ingress controller (Traefik on k3s).",
        ),
      nodePort: z
        .int()
        .min(30000)
        .max(32767)
        .optional()
        .describe("A fixed node port for type NodePort; unset, Kubernetes picks one."),
      ingress: ingress.optional(),
    })
    .strict(),
  {
    rule: "!has(self.nodePort) || self.type == 'NodePort'",
    message: nodePortRefusal,
    fieldPath: ".nodePort",
  },
  {
    rule: "self.type == 'Ingress' ? has(self.ingress) : !has(self.ingress)",
    message: ingressRefusal,
    fieldPath: ".ingress",
  },
);

export type GatewayExposeSpec = z.output<typeof gatewayExposeSpec>;
export type GatewayIngressSpec = NonNullable<GatewayExposeSpec["ingress"]>;

export const gatewayStatus = z
  .object({
    url: z
      .string()
      .max(2048)
      .optional()
      .describe("Where household devices reach the gateway through the Ingress (https://<host>/)."),
    appUrl: z
      .string()
      .max(2048)
      .optional()
      .describe(
        "Where household members reach remram-app through the same Ingress (https://<host>/remram/), while spec.app is enabled; `kubectl remram knowledge` uses it.",
      ),
    caCertificate: z
      .string()
      .max(16384)
      .optional()
      .describe(
        "PEM of the CA that signed the gateway's serving certificate (ca.crt of its TLS Secret): install it on a household device to trust the gateway. Never a key.",
      ),
    certificateNotAfter: timestamp.optional().describe("When the serving certificate expires."),
  })
  .strict();

export type GatewayStatus = z.output<typeof gatewayStatus>;
