import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../runtime/kube-client.js";
import { buildApplianceChildren } from "../children.js";
import { applianceContext } from "../testing/context.js";
import { appCredentialHashAnnotation, appPolicyComponents, buildRemramApp, unwantedApp } from "./app.js";
import type { ApplianceContext } from "./shared.js";

const context = applianceContext;

type AppDeployment = KubeObject & {
  spec: {
    replicas: number;
    selector: { matchLabels: Record<string, string> };
    template: {
      metadata: { labels: Record<string, string>; annotations: Record<string, string> };
      spec: {
        serviceAccountName: string;
        automountServiceAccountToken: boolean;
        securityContext: Record<string, unknown>;
        containers: {
          name: string;
          image: string;
          env: { name: string; value: string }[];
          ports: unknown[];
          readinessProbe: unknown;
          livenessProbe: unknown;
          resources: unknown;
          securityContext: Record<string, unknown>;
          volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[];
        }[];
        volumes: Record<string, unknown>[];
      };
    };
  };
};

function objectsOf(spec: unknown = {}, overrides: Partial<ApplianceContext> = {}) {
  const objects = buildRemramApp(context(spec, overrides));
  const byKind = (kind: string) => objects.find((object) => object.kind === kind);
  return {
    objects,
    serviceAccount: byKind("ServiceAccount") as KubeObject & { automountServiceAccountToken?: boolean },
    role: byKind("Role") as KubeObject & { rules: unknown[] },
    binding: byKind("RoleBinding") as KubeObject & { roleRef: unknown; subjects: unknown[] },
    deployment: byKind("Deployment") as AppDeployment,
    service: byKind("Service") as KubeObject & { spec: unknown },
  };
}

describe("remram-app's objects", () => {
  it("are a ServiceAccount, Role, RoleBinding, Deployment and Service named <appliance>-app, and the gateway's metrics Service, labelled and owned like every child", () => {
    const { objects } = objectsOf();
    expect(objects.map((object) => [object.kind, object.metadata.name])).toEqual([
      ["ServiceAccount", "box-app"],
      ["Role", "box-app"],
      ["RoleBinding", "box-app"],
      ["Deployment", "box-app"],
      ["Service", "box-app"],
      ["Service", "box-gateway-metrics"],
    ]);
    for (const object of objects) {
      expect(object.metadata.namespace).toBe("home");
      expect(object.metadata.labels).toEqual({
        "app.kubernetes.io/name": "remram-app",
        "app.kubernetes.io/instance": "box",
        "app.kubernetes.io/part-of": "remram",
        "app.kubernetes.io/managed-by": "remram-operator",
        "remram.io/appliance": "box",
      });
      expect(object.metadata.ownerReferences).toEqual([
        {
          apiVersion: "remram.io/v1alpha1",
          kind: "RemramAppliance",
          name: "box",
          uid: "u-1",
          controller: true,
        },
      ]);
    }
  });

  it("give the app exactly `get` on its own RemramAppliance, through its own ServiceAccount, and nothing cluster-wide", () => {
    const { serviceAccount, role, binding } = objectsOf();
    expect(serviceAccount.automountServiceAccountToken).toBe(true);
    expect(role.rules).toEqual([
      { apiGroups: ["remram.io"], resources: ["remramappliances"], resourceNames: ["box"], verbs: ["get"] },
    ]);
    expect(binding.roleRef).toEqual({ apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "box-app" });
    expect(binding.subjects).toEqual([{ kind: "ServiceAccount", name: "box-app", namespace: "home" }]);
    const everything = buildApplianceChildren(context({}));
    expect(everything.map((object) => object.kind)).not.toContain("ClusterRole");
    expect(everything.map((object) => object.kind)).not.toContain("ClusterRoleBinding");
  });

  it("run one restricted pod that reads its Cortex credential from a file and is probed on /healthz", () => {
    const { deployment } = objectsOf();
    expect(deployment.spec.replicas).toBe(1);
    expect(deployment.spec.selector.matchLabels).toEqual({
      "app.kubernetes.io/name": "remram-app",
      "app.kubernetes.io/instance": "box",
    });
    const pod = deployment.spec.template.spec;
    expect(pod.serviceAccountName).toBe("box-app");
    expect(pod.automountServiceAccountToken).toBe(true);
    expect(pod.securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 1000,
      runAsGroup: 1000,
      fsGroup: 1000,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(pod.containers).toHaveLength(1);
    const container = pod.containers[0];
    expect(container?.image).toBe("remram/app:0.1.0");
    expect(container?.securityContext).toEqual({
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      readOnlyRootFilesystem: true,
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(Object.fromEntries((container?.env ?? []).map((e) => [e.name, e.value]))).toEqual({
      REMRAM_APP_NAMESPACE: "home",
      REMRAM_APP_APPLIANCE: "box",
      REMRAM_APP_PORT: "8080",
      REMRAM_APP_BASE_PATH: "/remram/",
      REMRAM_APP_CORTEX_URL: "http://box-cortex.home.svc:8080",
      REMRAM_APP_CORTEX_TOKEN_FILE: "/var/run/secrets/remram/cortex/token",
      REMRAM_APP_GATEWAY_METRICS_URL: "http://box-gateway-metrics.home.svc:9464/metrics",
      REMRAM_APP_AGENT_ID: "main",
      TMPDIR: "/tmp",
    });
    // No credential in the environment, nor in the pod spec at all.
    expect(JSON.stringify(deployment)).not.toContain("cortex-app-secret");
    expect(container?.volumeMounts).toEqual([
      { name: "cortex-token", mountPath: "/var/run/secrets/remram/cortex", readOnly: true },
      { name: "tmp", mountPath: "/tmp" },
    ]);
    expect(pod.volumes).toEqual([
      {
        name: "cortex-token",
        secret: { secretName: "box-cortex-app", items: [{ key: "token", path: "token" }] },
      },
      { name: "tmp", emptyDir: {} },
    ]);
    expect(container?.ports).toEqual([{ name: "http", containerPort: 8080 }]);
    expect(container?.readinessProbe).toMatchObject({ httpGet: { path: "/healthz", port: "http" } });
    expect(container?.livenessProbe).toMatchObject({ httpGet: { path: "/healthz", port: "http" } });
    expect(container?.resources).toEqual({
      requests: { cpu: "20m", memory: "128Mi" },
      limits: { memory: "256Mi" },
    });
  });

  it("mount the credential Secret Cortex checks the app caller against", () => {
    const cortex = buildApplianceChildren(context({})).find(
      (object) => object.kind === "Secret" && object.metadata.name === "box-cortex-app",
    ) as (KubeObject & { data: Record<string, string> }) | undefined;
    expect(Buffer.from(cortex?.data.token ?? "", "base64").toString("utf8")).toBe("cortex-app-secret");
  });

  it("roll the pod when the app's Cortex credential changes, naming a digest of it and never the value", () => {
    const annotationOf = (app: string) => {
      const base = context({});
      return objectsOf(
        {},
        { secrets: { ...base.secrets, cortexCredentials: { ...base.secrets.cortexCredentials, app } } },
      ).deployment.spec.template.metadata.annotations[appCredentialHashAnnotation];
    };
    expect(annotationOf("first-app-credential")).toMatch(/^[0-9a-f]{16}$/);
    expect(annotationOf("first-app-credential")).toBe(annotationOf("first-app-credential"));
    expect(annotationOf("rotated-app-credential")).not.toBe(annotationOf("first-app-credential"));
  });

  it("take the spec's image and the first agent of the gateway", () => {
    const { deployment } = objectsOf({
      app: { image: "registry.lan/remram/app:0.2.0" },
      gateway: { agents: [{ id: "family" }, { id: "reader" }] },
    });
    const container = deployment.spec.template.spec.containers[0];
    expect(container?.image).toBe("registry.lan/remram/app:0.2.0");
    expect(container?.env).toContainEqual({ name: "REMRAM_APP_AGENT_ID", value: "family" });
  });

  it("serve HTTP on 8080 through the Service <appliance>-app", () => {
    const { service } = objectsOf();
    expect(service.spec).toEqual({
      selector: { "app.kubernetes.io/name": "remram-app", "app.kubernetes.io/instance": "box" },
      ports: [{ name: "http", port: 8080, targetPort: "http" }],
    });
  });

  it("read the hooks plugin's metrics through a ClusterIP Service of their own, which only the app may reach", () => {
    const { objects } = objectsOf();
    const metrics = objects.find((object) => object.metadata.name === "box-gateway-metrics") as
      | (KubeObject & { spec: unknown })
      | undefined;
    expect(metrics?.spec).toEqual({
      selector: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "box" },
      ports: [{ name: "metrics", port: 9464, targetPort: "metrics" }],
    });
    const policy = buildApplianceChildren(context({})).find(
      (object) => object.metadata.name === "box-allow-app-gateway-metrics",
    ) as (KubeObject & { spec: unknown }) | undefined;
    expect(policy?.spec).toEqual({
      podSelector: {
        matchLabels: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "box" },
      },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            {
              podSelector: {
                matchLabels: { "app.kubernetes.io/name": "remram-app", "app.kubernetes.io/instance": "box" },
              },
            },
          ],
          ports: [{ port: 9464 }],
        },
      ],
    });
  });

  it("name the spec's Prometheus to the app, when it names one", () => {
    const env = (spec: unknown) => objectsOf(spec).deployment.spec.template.spec.containers[0]?.env ?? [];
    expect(env({ app: { prometheusUrl: "http://prometheus.monitoring.svc:9090" } })).toContainEqual({
      name: "REMRAM_APP_PROMETHEUS_URL",
      value: "http://prometheus.monitoring.svc:9090",
    });
    expect(env({}).map((entry) => entry.name)).not.toContain("REMRAM_APP_PROMETHEUS_URL");
  });
});

describe("spec.app.enabled", () => {
  it("is on by default", () => {
    expect(context({}).spec.app).toEqual({ enabled: true });
    expect(unwantedApp(context({}))).toEqual([]);
  });

  it("false: none of the app's objects or policies, Cortex no longer admits it, and the reconciler deletes exactly what was there", () => {
    const off = buildApplianceChildren(context({ app: { enabled: false } }));
    const on = buildApplianceChildren(context({}));
    const names = (objects: KubeObject[]) =>
      objects.map((object) => `${object.apiVersion} ${object.kind}/${object.metadata.name}`);
    const appObjects = names(on).filter((name) => !names(off).includes(name));
    expect(appObjects.sort()).toEqual(
      [
        "v1 ServiceAccount/box-app",
        "rbac.authorization.k8s.io/v1 Role/box-app",
        "rbac.authorization.k8s.io/v1 RoleBinding/box-app",
        "apps/v1 Deployment/box-app",
        "v1 Service/box-app",
        "v1 Service/box-gateway-metrics",
        ...appPolicyComponents.map((component) => `networking.k8s.io/v1 NetworkPolicy/box-${component}`),
      ].sort(),
    );
    expect(names(off).filter((name) => !names(on).includes(name))).toEqual([]);
    expect(JSON.stringify(off)).not.toContain("remram-app");
    expect(
      unwantedApp(context({ app: { enabled: false } }))
        .map(({ apiVersion, kind, name }) => `${apiVersion} ${kind}/${name}`)
        .sort(),
    ).toEqual(appObjects.sort());
  });
});
