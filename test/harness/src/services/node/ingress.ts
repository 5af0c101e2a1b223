// The ingress controller k3s ships: Traefik in kube-system with its default IngressClass `traefik`, serving the
// Ingress API on the node's address at ports 80 and 443. k3s publishes it through a LoadBalancer Service that its
// service-lb answers with hostPort pods on every node; here Traefik's own pod holds the two hostPorts (the CNI
// portmap plugin, so the rules live in the node's namespace). Pure builders: image in, objects out.
import type { IngressEndpoints } from "../types.js";
import {
  clusterRole,
  clusterRoleBinding,
  type Manifest,
  onRealNode,
  restrictedContainer,
  serviceAccount,
  system,
} from "./addons.js";
import { nodeNetwork } from "./config.js";

const name = "traefik";
export const ingressClassName = "traefik";
/** Host ports as a k3s box answers them; container ports above 1024, as in Traefik's chart, so no capability. */
export const traefikPorts = {
  web: { hostPort: 80, containerPort: 8000 },
  websecure: { hostPort: 443, containerPort: 8443 },
  /** /ping, for the probes; not published on the node. */
  traefik: { containerPort: 8080 },
} as const;

/** Where tests reach the controller: the node's address, as `http://<box>/` on k3s. */
export function ingressEndpoints(): IngressEndpoints {
  return {
    http: `http://${nodeNetwork.nodeIp}`,
    https: `https://${nodeNetwork.nodeIp}`,
    className: ingressClassName,
    ip: nodeNetwork.nodeIp,
  };
}

/** The flags k3s's Traefik chart passes, minus what needs its CRDs, dashboard or metrics. */
export function traefikArgs(): string[] {
  const { web, websecure, traefik } = traefikPorts;
  return [
    "--global.checknewversion=false",
    "--global.sendanonymoususage=false",
    `--entrypoints.web.address=:${web.containerPort}/tcp`,
    `--entrypoints.websecure.address=:${websecure.containerPort}/tcp`,
    "--entrypoints.websecure.http.tls=true",
    `--entrypoints.traefik.address=:${traefik.containerPort}/tcp`,
    "--ping=true",
    "--providers.kubernetesingress=true",
    // k3s copies its LoadBalancer Service's address (the node's) into each Ingress's status; the same address here.
    `--providers.kubernetesingress.ingressendpoint.ip=${nodeNetwork.nodeIp}`,
    "--log.level=INFO",
  ];
}

/**
 * Read access for the kubernetesingress provider's informers (list + watch: it reads through caches only) and
 * status updates of the Ingresses it serves. Nodes: its cluster-scope informer (for NodePort load balancing) runs
 * unless cluster-scope lookups are off, which would also turn off IngressClasses.
 */
export function traefikRbac(): Manifest[] {
  const read = ["list", "watch"];
  return [
    serviceAccount(name),
    clusterRole(`${name}-${system}`, [
      { apiGroups: [""], resources: ["services", "secrets", "nodes"], verbs: read },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: read },
      { apiGroups: ["networking.k8s.io"], resources: ["ingresses", "ingressclasses"], verbs: read },
      { apiGroups: ["networking.k8s.io"], resources: ["ingresses/status"], verbs: ["update"] },
    ]),
    clusterRoleBinding(`${name}-${system}`, { kind: "ServiceAccount", name, namespace: system }),
  ];
}

export function traefikManifests(image: string): Manifest[] {
  const labels = { "app.kubernetes.io/name": name, "app.kubernetes.io/instance": `${name}-${system}` };
  const { web, websecure, traefik } = traefikPorts;
  const ping = { httpGet: { path: "/ping", port: traefik.containerPort } };
  return [
    ...traefikRbac(),
    {
      apiVersion: "networking.k8s.io/v1",
      kind: "IngressClass",
      metadata: {
        name: ingressClassName,
        annotations: { "ingressclass.kubernetes.io/is-default-class": "true" },
      },
      spec: { controller: "traefik.io/ingress-controller" },
    },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name, namespace: system, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: labels },
        // One node, one pod holding ports 80 and 443: a surge pod could never be scheduled beside it.
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } },
        template: {
          metadata: { labels },
          spec: {
            ...onRealNode,
            serviceAccountName: name,
            priorityClassName: "system-cluster-critical",
            terminationGracePeriodSeconds: 5,
            // Restricted in every field; only the hostPorts are beyond it (the baseline level forbids them).
            securityContext: {
              runAsNonRoot: true,
              runAsUser: 65532,
              runAsGroup: 65532,
              seccompProfile: { type: "RuntimeDefault" },
            },
            containers: [
              {
                name,
                image,
                imagePullPolicy: "Never",
                args: traefikArgs(),
                ports: [
                  { name: "web", protocol: "TCP", ...web },
                  { name: "websecure", protocol: "TCP", ...websecure },
                  { name: "traefik", protocol: "TCP", ...traefik },
                ],
                readinessProbe: { ...ping, periodSeconds: 2 },
                livenessProbe: { ...ping, periodSeconds: 10 },
                resources: { requests: { cpu: "50m", memory: "64Mi" }, limits: { memory: "256Mi" } },
                securityContext: restrictedContainer,
              },
            ],
          },
        },
      },
    },
    // In-cluster clients reach the controller by name, as on k3s (there of type LoadBalancer).
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name, namespace: system, labels },
      spec: {
        selector: labels,
        ports: [
          { name: "web", port: web.hostPort, targetPort: "web", protocol: "TCP" },
          { name: "websecure", port: websecure.hostPort, targetPort: "websecure", protocol: "TCP" },
        ],
      },
    },
  ];
}
