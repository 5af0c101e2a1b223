/** The appliance's NetworkPolicies. */
import type { KubeObject } from "../../runtime/kube-client.js";
import { hooksMetricsPort } from "../openclaw-config.js";
import { appComponent, appPort } from "./app.js";
import { type ApplianceContext, applianceLabel, childMeta, ports, selectorLabels } from "./shared.js";

function namespacePeer(namespace: string) {
  return { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } } };
}

/** Default-deny ingress for the appliance's pods, then only the paths the architecture needs. */
export function buildNetworkPolicies(ctx: ApplianceContext): KubeObject[] {
  const policy = (component: string, spec: Record<string, unknown>): KubeObject =>
    ({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      metadata: childMeta(ctx, component),
      spec,
    }) as KubeObject;
  const from = (...components: string[]) =>
    components.map((component) => ({ podSelector: { matchLabels: selectorLabels(ctx.name, component) } }));
  const appSelector = { matchLabels: selectorLabels(ctx.name, appComponent) };
  // remram-app: people reach it where they reach the gateway (from anywhere, for now through a port-forward). Like
  // every appliance pod it has no egress policy: the API server it calls is no pod a selector can name, and its
  // Service's port is translated to wherever the server listens (6443 on k3s, another port elsewhere) before policy
  // sees it, so a port rule would hold on one cluster and cut the app off on the next.
  const appPolicies = (): KubeObject[] => [
    policy("allow-app", {
      podSelector: appSelector,
      policyTypes: ["Ingress"],
      ingress: [{ ports: [{ port: appPort }] }],
    }),
    // The diagnostics page's capture backlog and escalations come from the hooks plugin's /metrics.
    policy("allow-app-gateway-metrics", {
      podSelector: { matchLabels: selectorLabels(ctx.name, "gateway") },
      policyTypes: ["Ingress"],
      ingress: [{ from: [{ podSelector: appSelector }], ports: [{ port: hooksMetricsPort }] }],
    }),
  ];
  const allow = (target: keyof typeof ports, sources: Record<string, unknown>[]) =>
    policy(`allow-${target}`, {
      podSelector: { matchLabels: selectorLabels(ctx.name, target) },
      policyTypes: ["Ingress"],
      ingress: [{ ...(sources.length > 0 ? { from: sources } : {}), ports: [{ port: ports[target] }] }],
    });
  return [
    policy("default-deny", {
      podSelector: { matchLabels: { [applianceLabel]: ctx.name } },
      policyTypes: ["Ingress"],
    }),
    allow("opensearch", from("cortex")),
    // The operator pulls and lists models (ModelsReady); without it an in-cluster operator never sees them.
    allow("ollama", [...from("cortex", "gateway"), namespacePeer(ctx.operatorNamespace)]),
    // Cortex's API: the gateway's hooks, the operator (policies, dream, promotions) from its own namespace, and
    // the appliance's remram-app while it runs. Prometheus scrapes /metrics on the same port (Cortex serves both there,
    // so the policy can narrow the scrape to the port, not the path), only from the metrics namespaces.
    policy("allow-cortex", {
      podSelector: { matchLabels: selectorLabels(ctx.name, "cortex") },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            ...from("gateway"),
            namespacePeer(ctx.operatorNamespace),
            ...(ctx.spec.app.enabled ? from(appComponent) : []),
          ],
          ports: [{ port: ports.cortex }],
        },
        ...(ctx.metricsNamespaces.length === 0
          ? []
          : [{ from: ctx.metricsNamespaces.map(namespacePeer), ports: [{ port: ports.cortex }] }]),
      ],
    }),
    // The gateway is the appliance's front door.
    allow("gateway", []),
    ...(ctx.spec.app.enabled ? appPolicies() : []),
    // The hooks plugin's metrics, for Prometheus in the namespaces the chart names, and nobody else.
    ...(ctx.metricsNamespaces.length === 0
      ? []
      : [
          policy("allow-gateway-metrics", {
            podSelector: { matchLabels: selectorLabels(ctx.name, "gateway") },
            policyTypes: ["Ingress"],
            ingress: [
              {
                from: ctx.metricsNamespaces.map(namespacePeer),
                ports: [{ port: hooksMetricsPort }],
              },
            ],
          }),
        ]),
  ];
}
