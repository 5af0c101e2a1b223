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
            // No namespaceSelector: the appliance's own remram-app, in its namespace, and no other appliance's.
            {
              podSelector: {
                matchLabels: { "app.kubernetes.io/name": "remram-app", "app.kubernetes.io/instance": "box" },
              },
            },
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
    // Without the app, only the gateway and the operator.
    const withoutApp = buildApplianceChildren(
      context({ app: { enabled: false } }, { metricsNamespaces: [] }),
    ).find((child) => child.metadata.name === "box-allow-cortex") as
      | (KubeObject & { spec: { ingress: { from: unknown[] }[] } })
      | undefined;
    expect(withoutApp?.spec.ingress.map((rule) => rule.from.length)).toEqual([2]);
    expect(JSON.stringify(withoutApp)).not.toContain("remram-app");
  });

  it("admit people to remram-app where they reach the gateway, and let the app reach only Cortex, the API server and DNS", () => {
    const children = buildApplianceChildren(context({}));
    const policyOf = (name: string) =>
      children.find((child) => child.kind === "NetworkPolicy" && child.metadata.name === name) as
        | (KubeObject & { spec: Record<string, unknown> })
        | undefined;
    const appSelector = {
      matchLabels: { "app.kubernetes.io/name": "remram-app", "app.kubernetes.io/instance": "box" },
    };
    // The gateway's front door is open to every source on its port; the app's is the same, on 8080.
    expect(policyOf("box-allow-gateway")?.spec.ingress).toEqual([{ ports: [{ port: 18789 }] }]);
    expect(policyOf("box-allow-app")?.spec).toEqual({
      podSelector: appSelector,
      policyTypes: ["Ingress"],
      ingress: [{ ports: [{ port: 8080 }] }],
    });
    // No appliance pod is held to an egress policy: the app's API server is no pod, and its port is translated.
    const egress = children.filter(
      (child) =>
        child.kind === "NetworkPolicy" &&
        ((child as unknown as { spec: { policyTypes: string[] } }).spec.policyTypes ?? []).includes("Egress"),
    );
    expect(egress.map((child) => child.metadata.name)).toEqual([]);
  });
});
