import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../../api/v1alpha1/remram-appliance.js";
import type { KubeObject } from "../../runtime/kube-client.js";
import { buildApplianceChildren } from "../children.js";
import { applianceContext } from "../testing/context.js";
import {
  buildGatewayExposure,
  gatewayTls,
  servingCertificateDuration,
  servingCertificateRenewBefore,
  traefikHttpsOnly,
  unwantedExposure,
} from "./gateway-expose.js";
import { buildNetworkPolicies } from "./network-policies.js";

const host = "moltbox.home.arpa";
const ingressSpec = (tls: Record<string, unknown> = {}) => ({
  gateway: { expose: { type: "Ingress", ingress: { host, tls } } },
});

type Service = KubeObject & { spec: { type: string; ports: { port: number; nodePort?: number }[] } };

function serviceOf(specInput: unknown): Service {
  const service = buildApplianceChildren(applianceContext(specInput)).find(
    (child) => child.kind === "Service" && child.metadata.name === "box-gateway",
  );
  if (service === undefined) throw new Error("no gateway Service");
  return service as Service;
}

function exposureOf(specInput: unknown, certManagerInstalled = false) {
  const children = buildGatewayExposure(applianceContext(specInput, { certManagerInstalled }));
  const byKind = (kind: string) =>
    children.filter((child) => child.kind === kind) as (KubeObject & {
      spec: Record<string, unknown>;
    })[];
  return {
    children,
    ingress: byKind("Ingress")[0],
    certificates: byKind("Certificate"),
    issuers: byKind("Issuer"),
  };
}

describe("the gateway's Service", () => {
  it("stays a ClusterIP Service by default, as before, and for an Ingress", () => {
    expect(serviceOf({}).spec).toMatchObject({ type: "ClusterIP", ports: [{ name: "http", port: 18789 }] });
    expect(serviceOf({}).spec.ports[0]).not.toHaveProperty("nodePort");
    expect(serviceOf(ingressSpec()).spec.type).toBe("ClusterIP");
  });

  it("is a NodePort Service, on the spec's fixed port when one is given", () => {
    expect(serviceOf({ gateway: { expose: { type: "NodePort" } } }).spec.ports[0]).not.toHaveProperty(
      "nodePort",
    );
    const fixed = serviceOf({ gateway: { expose: { type: "NodePort", nodePort: 30789 } } });
    expect(fixed.spec).toMatchObject({ type: "NodePort", ports: [{ port: 18789, nodePort: 30789 }] });
  });

  it("is a LoadBalancer Service for k3s's ServiceLB", () => {
    expect(serviceOf({ gateway: { expose: { type: "LoadBalancer" } } }).spec.type).toBe("LoadBalancer");
  });
});

describe("the gateway's Ingress", () => {
  it("routes every path of the host to the gateway's Service but remram-app's, HTTPS only on Traefik, with <name>-gateway-tls", () => {
    const { ingress } = exposureOf(ingressSpec());
    expect(ingress?.metadata).toMatchObject({
      name: "box-gateway",
      namespace: "home",
      annotations: traefikHttpsOnly,
      ownerReferences: [expect.objectContaining({ kind: "RemramAppliance", controller: true })],
    });
    expect(ingress?.spec).toEqual({
      ingressClassName: "traefik",
      tls: [{ hosts: [host], secretName: "box-gateway-tls" }],
      rules: [
        {
          host,
          http: {
            paths: [
              {
                path: "/remram/",
                pathType: "Prefix",
                backend: { service: { name: "box-app", port: { name: "http" } } },
              },
              {
                path: "/",
                pathType: "Prefix",
                backend: { service: { name: "box-gateway", port: { name: "http" } } },
              },
            ],
          },
        },
      ],
    });
  });

  it("leaves the whole host to the gateway when remram-app is off", () => {
    const { ingress } = exposureOf({ ...ingressSpec(), app: { enabled: false } });
    const rules = ingress?.spec.rules as { http: { paths: { path: string }[] } }[];
    expect(rules[0]?.http.paths.map((path) => path.path)).toEqual(["/"]);
  });

  it("serves plain HTTP on every entrypoint when TLS is off, and takes another class", () => {
    const { ingress } = exposureOf({
      gateway: {
        expose: { type: "Ingress", ingress: { host, className: "nginx", tls: { enabled: false } } },
      },
    });
    expect(ingress?.metadata).not.toHaveProperty("annotations");
    expect(ingress?.spec).not.toHaveProperty("tls");
    expect(ingress?.spec.ingressClassName).toBe("nginx");
  });

  it("names the Secret the user provides and makes no certificate", () => {
    const { ingress, certificates } = exposureOf(ingressSpec({ secretName: "my-tls" }), true);
    expect(ingress?.spec.tls).toEqual([{ hosts: [host], secretName: "my-tls" }]);
    expect(certificates).toEqual([]);
  });

  it("is absent for every other exposure type", () => {
    for (const type of ["ClusterIP", "NodePort", "LoadBalancer"])
      expect(exposureOf({ gateway: { expose: { type } } }, true).children).toEqual([]);
  });
});

describe("the Ingress's certificate", () => {
  const tlsOf = (specInput: unknown, certManagerInstalled: boolean) =>
    gatewayTls({ name: "box", spec: remramApplianceSpec.parse(specInput) }, certManagerInstalled);

  it("is planned from the spec and whether cert-manager is installed", () => {
    expect(tlsOf({}, true)).toEqual({ mode: "off" });
    expect(tlsOf(ingressSpec({ enabled: false }), true)).toEqual({ mode: "off" });
    expect(tlsOf(ingressSpec({ secretName: "mine" }), false)).toEqual({
      mode: "provided",
      secretName: "mine",
    });
    // No issuer named: the operator's own CA, with or without cert-manager.
    for (const certManager of [true, false])
      expect(tlsOf(ingressSpec(), certManager)).toEqual({
        mode: "operator-ca",
        secretName: "box-gateway-tls",
        caSecretName: "box-gateway-ca",
      });
    expect(tlsOf(ingressSpec({ issuerRef: { name: "letsencrypt", kind: "ClusterIssuer" } }), true)).toEqual({
      mode: "issuer",
      secretName: "box-gateway-tls",
      issuerRef: { name: "letsencrypt", kind: "ClusterIssuer", group: "cert-manager.io" },
    });
    expect(tlsOf(ingressSpec({ issuerRef: { name: "letsencrypt" } }), false)).toEqual({
      mode: "unavailable",
      secretName: "box-gateway-tls",
    });
  });

  it("needs no cert-manager object when the operator's CA issues it", () => {
    const { ingress, certificates, issuers } = exposureOf(ingressSpec(), true);
    expect([...certificates, ...issuers]).toEqual([]);
    expect(ingress?.spec.tls).toEqual([{ hosts: [host], secretName: "box-gateway-tls" }]);
  });

  it("comes from the spec's issuer alone when one is named, renewed at two thirds of its lifetime", () => {
    const { certificates, issuers } = exposureOf(ingressSpec({ issuerRef: { name: "home-ca" } }), true);
    expect(issuers).toEqual([]);
    expect(certificates.map((certificate) => certificate.spec)).toEqual([
      expect.objectContaining({
        secretName: "box-gateway-tls",
        dnsNames: [host],
        duration: servingCertificateDuration,
        renewBefore: servingCertificateRenewBefore,
        issuerRef: { name: "home-ca", kind: "Issuer", group: "cert-manager.io" },
      }),
    ]);
    expect(Number.parseInt(servingCertificateRenewBefore, 10) * 3).toBe(
      Number.parseInt(servingCertificateDuration, 10),
    );
  });

  it("is nobody's to issue when the named issuer's cert-manager is missing: the Ingress still names the Secret", () => {
    const { ingress, certificates } = exposureOf(ingressSpec({ issuerRef: { name: "home-ca" } }), false);
    expect(certificates).toEqual([]);
    expect(ingress?.spec.tls).toEqual([{ hosts: [host], secretName: "box-gateway-tls" }]);
  });
});

describe("what exposing the gateway leaves alone, and what it takes back", () => {
  it("changes no NetworkPolicy: the gateway's rule already admits every source, Traefik included", () => {
    const policies = (specInput: unknown) =>
      JSON.stringify(buildNetworkPolicies(applianceContext(specInput)));
    for (const expose of [{ type: "NodePort" }, { type: "LoadBalancer" }, ingressSpec().gateway.expose])
      expect(policies({ gateway: { expose } })).toBe(policies({}));
  });

  it("names the Ingress, and with cert-manager its Certificate, as leftovers once the spec stops wanting them", () => {
    const leftovers = (specInput: unknown, certManagerInstalled: boolean) =>
      unwantedExposure(applianceContext(specInput, { certManagerInstalled })).map(
        (object) => `${object.kind}/${object.name}`,
      );
    expect(leftovers({}, true)).toEqual(["Ingress/box-gateway", "Certificate/box-gateway-tls"]);
    expect(leftovers({}, false)).toEqual(["Ingress/box-gateway"]);
    expect(leftovers(ingressSpec(), true)).toEqual(["Certificate/box-gateway-tls"]);
    expect(leftovers(ingressSpec({ issuerRef: { name: "home-ca" } }), true)).toEqual([]);
  });
});
