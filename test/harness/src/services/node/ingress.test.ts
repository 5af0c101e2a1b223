import { describe, expect, it } from "vitest";
import { nodeNetwork } from "./config.js";
import { ingressEndpoints, traefikManifests, traefikPorts } from "./ingress.js";

type Manifest = Record<string, unknown>;
interface Container {
  image: string;
  args: string[];
  ports: { name: string; containerPort: number; hostPort?: number }[];
  securityContext: { capabilities: { add?: string[]; drop: string[] }; allowPrivilegeEscalation: boolean };
}
interface PodSpec {
  hostNetwork?: boolean;
  securityContext: { runAsNonRoot: boolean; runAsUser: number };
  containers: Container[];
}
interface Rule {
  resources: string[];
  verbs: string[];
}

const manifests = traefikManifests("localhost/traefik:v3.7.13");
const ofKind = (kind: string): Manifest[] => manifests.filter((manifest) => manifest.kind === kind);
const podSpec = (ofKind("Deployment")[0] as { spec: { template: { spec: PodSpec } } }).spec.template.spec;

describe("Traefik on the real node", () => {
  it("answers on the node's ports 80 and 443 from unprivileged container ports, with no capability", () => {
    const [container] = podSpec.containers;
    expect(container?.ports).toEqual([
      { name: "web", protocol: "TCP", hostPort: 80, containerPort: 8000 },
      { name: "websecure", protocol: "TCP", hostPort: 443, containerPort: 8443 },
      { name: "traefik", protocol: "TCP", containerPort: 8080 },
    ]);
    expect(container?.args).toContain(`--entrypoints.web.address=:${traefikPorts.web.containerPort}/tcp`);
    expect(container?.args).toContain(
      `--entrypoints.websecure.address=:${traefikPorts.websecure.containerPort}/tcp`,
    );
    expect(container?.securityContext.capabilities).toEqual({ drop: ["ALL"] });
    expect(container?.securityContext.allowPrivilegeEscalation).toBe(false);
    expect(podSpec.hostNetwork).toBeUndefined();
    expect(podSpec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532 });
  });

  it("writes the node's address into Ingress status and hands tests the same address", () => {
    expect(podSpec.containers[0]?.args).toContain(
      `--providers.kubernetesingress.ingressendpoint.ip=${nodeNetwork.nodeIp}`,
    );
    expect(ingressEndpoints()).toEqual({
      http: `http://${nodeNetwork.nodeIp}`,
      https: `https://${nodeNetwork.nodeIp}`,
      className: "traefik",
      ip: nodeNetwork.nodeIp,
    });
  });

  it("is the default IngressClass, as on k3s", () => {
    expect(ofKind("IngressClass")).toEqual([
      {
        apiVersion: "networking.k8s.io/v1",
        kind: "IngressClass",
        metadata: { name: "traefik", annotations: { "ingressclass.kubernetes.io/is-default-class": "true" } },
        spec: { controller: "traefik.io/ingress-controller" },
      },
    ]);
  });

  it("may only read, except for the status of Ingresses", () => {
    const rules = (ofKind("ClusterRole")[0] as { rules: Rule[] }).rules;
    const writes = rules.filter((rule) => rule.verbs.some((verb) => verb !== "list" && verb !== "watch"));
    expect(writes).toEqual([
      { apiGroups: ["networking.k8s.io"], resources: ["ingresses/status"], verbs: ["update"] },
    ]);
    expect(rules.flatMap((rule) => rule.resources).sort()).toEqual(
      [
        "endpointslices",
        "ingressclasses",
        "ingresses",
        "ingresses/status",
        "nodes",
        "secrets",
        "services",
      ].sort(),
    );
  });
});
