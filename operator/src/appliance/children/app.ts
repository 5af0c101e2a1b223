/**
 * remram-app (app/): its ServiceAccount, the Role that lets it read its own appliance and nothing else, the binding,
 * its Deployment and its Service. Its NetworkPolicies are in network-policies.ts. `spec.app.enabled: false` builds
 * none of it, and the reconciler deletes what an earlier spec made (unwantedApp).
 */
import { createHash } from "node:crypto";
import { basename, dirname } from "node:path";
import { group } from "../../api/v1alpha1/common.js";
import type { KubeObject } from "../../runtime/kube-client.js";
import { gatewayAgents, hooksMetricsPort } from "../openclaw-config.js";
import { cortexCredentialSecret } from "./cortex.js";
import {
  type ApplianceContext,
  childLabels,
  childMeta,
  childName,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  selectorLabels,
  serviceUrl,
} from "./shared.js";

/** The app's `app.kubernetes.io/name`; Cortex's NetworkPolicy admits pods with it (and the appliance's instance). */
export const appComponent = "remram-app";
export const appPort = 8080;
/**
 * Where the app serves its pages and API: a prefix of the gateway's host behind the appliance's Ingress, and the same
 * path through a port-forward, so every address of the app has one shape. The gateway keeps the rest of the host.
 */
export const appBasePath = "/remram/";
/** The app's own Cortex credential (the `app` caller), a file, never an environment variable. */
export const appCortexTokenFile = "/var/run/secrets/remram/cortex/token";
/**
 * A digest of the app's Cortex credential (never the value): the app reads its file once at start, so a rotated
 * credential rolls the pod onto it.
 */
export const appCredentialHashAnnotation = "remram.io/cortex-credential-hash";

/**
 * The same on every profile: the app idles between a person's page loads. Measured idle: about 100 MB of anonymous
 * memory (150 MB resident), most of it @kubernetes/client-node; the CPU request counts in the profiles' 70 % budget.
 */
export const appResources = { requests: { cpu: "20m", memory: "128Mi" }, limits: { memory: "256Mi" } };

/** `<appliance>-app`: the ServiceAccount, Role, RoleBinding, Deployment and Service all carry this name (and
 * `<appliance>-gateway-metrics` is the app's window on the hooks plugin's metrics). */
export function appName(appliance: string): string {
  return childName(appliance, "app");
}

/** What the app's identity may do: read its own RemramAppliance (the household's members), nothing else. */
export function appRoleRules(appliance: string) {
  return [
    { apiGroups: [group], resources: ["remramappliances"], resourceNames: [appliance], verbs: ["get"] },
  ];
}

function appMeta(ctx: ApplianceContext) {
  return childMeta(ctx, appComponent, appName(ctx.name));
}

function credentialDigest(value: string): string {
  return createHash("sha256").update(value).digest("hex").slice(0, 16);
}

export function buildRemramApp(ctx: ApplianceContext): KubeObject[] {
  if (!ctx.spec.app.enabled) return [];
  const name = appName(ctx.name);
  const cortexToken = cortexCredentialSecret(ctx, "app");
  const serviceAccount = {
    apiVersion: "v1",
    kind: "ServiceAccount",
    metadata: appMeta(ctx),
    // Mounted into the app's pod: with it the app reads its own appliance and nothing else (appRoleRules). A person's
    // requests carry the person's own token, so the app needs no right to review anyone's.
    automountServiceAccountToken: true,
  };
  const role = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "Role",
    metadata: appMeta(ctx),
    rules: appRoleRules(ctx.name),
  };
  const roleBinding = {
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: appMeta(ctx),
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name },
    subjects: [{ kind: "ServiceAccount", name, namespace: ctx.namespace }],
  };
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: appMeta(ctx),
    spec: {
      replicas: 1,
      selector: { matchLabels: selectorLabels(ctx.name, appComponent) },
      template: {
        metadata: {
          labels: childLabels(ctx.name, appComponent),
          annotations: {
            [appCredentialHashAnnotation]: credentialDigest(ctx.secrets.cortexCredentials.app),
          },
        },
        spec: {
          serviceAccountName: name,
          // The one pod of the appliance with a token: the app reads its appliance (the household) with it. A person's
          // requests carry their own token (identity/identify.ts in app/).
          automountServiceAccountToken: true,
          securityContext: restrictedPodSecurity(1000),
          containers: [
            {
              name: "app",
              image: ctx.spec.app.image ?? ctx.images.app,
              env: [
                { name: "REMRAM_APP_NAMESPACE", value: ctx.namespace },
                { name: "REMRAM_APP_APPLIANCE", value: ctx.name },
                { name: "REMRAM_APP_PORT", value: String(appPort) },
                { name: "REMRAM_APP_BASE_PATH", value: appBasePath },
                { name: "REMRAM_APP_CORTEX_URL", value: serviceUrl(ctx, "cortex") },
                { name: "REMRAM_APP_CORTEX_TOKEN_FILE", value: appCortexTokenFile },
                {
                  name: "REMRAM_APP_GATEWAY_METRICS_URL",
                  value: `http://${gatewayMetricsServiceName(ctx.name)}.${ctx.namespace}.svc:${hooksMetricsPort}/metrics`,
                },
                ...(ctx.spec.app.prometheusUrl === undefined
                  ? []
                  : [{ name: "REMRAM_APP_PROMETHEUS_URL", value: ctx.spec.app.prometheusUrl }]),
                // The first agent owns the channels: its archived conversations are the household's.
                { name: "REMRAM_APP_AGENT_ID", value: gatewayAgents(ctx.spec.gateway)[0]?.id ?? "main" },
                { name: "TMPDIR", value: "/tmp" },
              ],
              ports: [{ name: "http", containerPort: appPort }],
              readinessProbe: { httpGet: { path: "/healthz", port: "http" }, periodSeconds: 10 },
              livenessProbe: {
                httpGet: { path: "/healthz", port: "http" },
                periodSeconds: 20,
                failureThreshold: 6,
              },
              resources: appResources,
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "cortex-token", mountPath: dirname(appCortexTokenFile), readOnly: true },
                { name: "tmp", mountPath: "/tmp" },
              ],
            },
          ],
          volumes: [
            {
              name: "cortex-token",
              secret: {
                secretName: cortexToken.name,
                items: [{ key: cortexToken.key, path: basename(appCortexTokenFile) }],
              },
            },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
    },
  };
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: appMeta(ctx),
    spec: {
      selector: selectorLabels(ctx.name, appComponent),
      ports: [{ name: "http", port: appPort, targetPort: "http" }],
    },
  };
  return [
    serviceAccount,
    role,
    roleBinding,
    deployment,
    service,
    gatewayMetricsService(ctx),
  ] as unknown as KubeObject[];
}

/** `<appliance>-gateway-metrics`: the hooks plugin's /metrics for the app alone (the gateway's Service may face the LAN). */
export function gatewayMetricsServiceName(appliance: string): string {
  return childName(appliance, "gateway-metrics");
}

function gatewayMetricsService(ctx: ApplianceContext) {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: childMeta(ctx, appComponent, gatewayMetricsServiceName(ctx.name)),
    spec: {
      selector: selectorLabels(ctx.name, "gateway"),
      ports: [{ name: "metrics", port: hooksMetricsPort, targetPort: "metrics" }],
    },
  };
}

/** The app's NetworkPolicies' components (network-policies.ts names them `<appliance>-<component>`). */
export const appPolicyComponents = ["allow-app", "allow-app-gateway-metrics"] as const;

/**
 * What `spec.app.enabled: false` leaves to delete: every object buildRemramApp and the app's NetworkPolicies would
 * make. The reconciler deletes each one the appliance owns; none when the app is on.
 */
export function unwantedApp(
  ctx: Pick<ApplianceContext, "name" | "spec">,
): { apiVersion: string; kind: string; name: string }[] {
  if (ctx.spec.app.enabled) return [];
  const name = appName(ctx.name);
  return [
    { apiVersion: "apps/v1", kind: "Deployment", name },
    { apiVersion: "v1", kind: "Service", name },
    { apiVersion: "v1", kind: "Service", name: gatewayMetricsServiceName(ctx.name) },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "RoleBinding", name },
    { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role", name },
    { apiVersion: "v1", kind: "ServiceAccount", name },
    ...appPolicyComponents.map((component) => ({
      apiVersion: "networking.k8s.io/v1",
      kind: "NetworkPolicy",
      name: childName(ctx.name, component),
    })),
  ];
}
