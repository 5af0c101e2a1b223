import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../runtime/kube-client.js";
import { buildApplianceChildren } from "../children.js";
import { applianceContext } from "../testing/context.js";
import type { ApplianceContext } from "./shared.js";

const context = applianceContext;

describe("the appliance's children", () => {
  it("serve the hooks plugin's metrics on the gateway's metrics port, reachable only from the metrics namespaces", () => {
    const children = buildApplianceChildren(context({}));
    const secret = children.find((child) => child.metadata.name === "box-gateway-config") as unknown as {
      data: Record<string, string>;
    };
    const config = JSON.parse(Buffer.from(secret.data["openclaw.json"] as string, "base64").toString("utf8"));
    expect(config.plugins.entries["remram-hooks"].config.metrics).toEqual({ host: "0.0.0.0", port: 9464 });
    const gateway = children.find(
      (child) => child.kind === "Deployment" && child.metadata.name === "box-gateway",
    ) as { spec: { template: { spec: { containers: { ports: unknown[] }[] } } } } | undefined;
    expect(gateway?.spec.template.spec.containers[0]?.ports).toContainEqual({
      name: "metrics",
      containerPort: 9464,
    });
    expect(children.find((child) => child.metadata.name === "box-allow-gateway-metrics")).toMatchObject({
      kind: "NetworkPolicy",
      spec: {
        podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway" } },
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }],
            ports: [{ port: 9464 }],
          },
        ],
      },
    });
    // The in-cluster operator lists and pulls models through Ollama's API; only Cortex and the gateway besides.
    expect(children.find((child) => child.metadata.name === "box-allow-ollama")).toMatchObject({
      spec: {
        ingress: [
          {
            from: [
              { podSelector: { matchLabels: { "app.kubernetes.io/name": "cortex" } } },
              { podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway" } } },
              { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "remram-system" } } },
            ],
            ports: [{ port: 11434 }],
          },
        ],
      },
    });
    // Without metrics namespaces the default-deny policy keeps the port closed.
    const closed = buildApplianceChildren(context({}, { metricsNamespaces: [] }));
    expect(closed.find((child) => child.metadata.name === "box-allow-gateway-metrics")).toBeUndefined();
  });

  it("admit to Cortex only the gateway, the operator's namespace, the Remram app and Prometheus from the metrics namespaces", () => {
    const cortexPolicy = (overrides: Partial<ApplianceContext> = {}) =>
      buildApplianceChildren(context({}, overrides)).find(
        (child) => child.metadata.name === "box-allow-cortex",
      ) as (KubeObject & { spec: Record<string, unknown> }) | undefined;
    const policy = cortexPolicy({ metricsNamespaces: ["monitoring", "observability"] });
    expect(policy?.kind).toBe("NetworkPolicy");
    expect(policy?.spec).toEqual({
      podSelector: {
        matchLabels: { "app.kubernetes.io/name": "cortex", "app.kubernetes.io/instance": "box" },
      },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            {
              podSelector: {
                matchLabels: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "box" },
              },
            },
            { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "remram-system" } } },
            // No namespaceSelector: pods of the appliance's own namespace only.
            { podSelector: { matchLabels: { "app.kubernetes.io/name": "remram-app" } } },
          ],
          ports: [{ port: 8080 }],
        },
        {
          from: [
            { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
            { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "observability" } } },
          ],
          ports: [{ port: 8080 }],
        },
      ],
    });
    // No peer may select every namespace (an empty selector) or every pod.
    const peers = JSON.stringify(policy?.spec.ingress);
    expect(peers).not.toContain('"namespaceSelector":{}');
    expect(peers).not.toContain('"podSelector":{}');
    // Without metrics namespaces nobody scrapes Cortex; the callers stay.
    const unscraped = cortexPolicy({ metricsNamespaces: [] });
    const rules = (unscraped?.spec.ingress ?? []) as { from: unknown[] }[];
    expect(rules.map((rule) => rule.from.length)).toEqual([3]);
  });
});
