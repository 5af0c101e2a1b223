import { X509Certificate } from "node:crypto";
// REMRAM_TESTBED=kubernetes: the operator (in this process) against the real API server, for the parts of
// spec.gateway.expose and spec.gateway.channels that are the reconciler's: the Ingress it applies and deletes, the
// TLS Secret and the bots' token Secrets it reads (GatewayExposed, ChannelsReady, status.gateway, which the CRD's
// status schema must admit), and the gateway Deployment's environment. No pod runs (no node is needed): the real
// node suite sends a chat completion through Traefik (real-appliance-ingress.ts), and gateway-household runs the
// channel on a real gateway.
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import { channelTokenVersionsAnnotation, configHashAnnotation } from "../src/appliance/children/gateway.js";
import { channelTokenEnv } from "../src/appliance/openclaw-channels.js";
import type { RunningOperator } from "../src/operator.js";
import type { KubeObject } from "../src/runtime/kube-client.js";
import {
  adminClient,
  createNamespace,
  getStatusCondition,
  installCrds,
  runSuffix,
  startTestOperator,
  untilCondition as untilApplianceCondition,
} from "./cluster.js";
import { householdCertificates } from "./tls-fixtures.js";

const { client, kubeConfig } = adminClient();
const suffix = runSuffix();
const namespace = `gateway-access-${suffix}`;
const api = `/apis/remram.io/v1alpha1/namespaces/${namespace}/remramappliances`;
const host = `moltbox.${namespace}.test`;
const secrets = `/api/v1/namespaces/${namespace}/secrets`;
const ingressPath = `/apis/networking.k8s.io/v1/namespaces/${namespace}/ingresses/box-gateway`;
// The ingress controller's namespace for this suite (kube-system's Traefik on a k3s box): its Service's
// EndpointSlice holds the controller pods' addresses, the only ones the gateway takes X-Forwarded-For from.
const controllerNamespace = `ingress-${suffix}`;
const slices = `/apis/discovery.k8s.io/v1/namespaces/${controllerNamespace}/endpointslices`;
const controllerSlice = (addresses: string[]) => ({
  apiVersion: "discovery.k8s.io/v1",
  kind: "EndpointSlice",
  metadata: {
    name: "traefik-abcde",
    namespace: controllerNamespace,
    labels: { "kubernetes.io/service-name": "traefik" },
  },
  addressType: "IPv4",
  ports: [{ name: "websecure", port: 8443, protocol: "TCP" }],
  endpoints: addresses.map((address) => ({ addresses: [address], conditions: { ready: true } })),
});

type Appliance = KubeObject & {
  status?: {
    conditions?: { type: string; status: string; reason: string; message?: string }[];
    gateway?: { url?: string; caCertificate?: string; certificateNotAfter?: string };
  };
};

let operator: RunningOperator;
let certificates: { dir: string; ca: string };

const appliance = () => client.get<Appliance>(`${api}/box`);

const untilCondition = (type: string, status: string, reason: string) =>
  untilApplianceCondition<Appliance>(client, `${api}/box`, type, status, reason);

/** An annotation on the appliance wakes its reconcile at once (user Secrets are not watched; it would come in 30 s). */
const nudge = (value: string) =>
  client.mergePatch(`${api}/box`, { metadata: { annotations: { "test.remram.io/nudge": value } } });

type GatewayDeployment = KubeObject & {
  spec: {
    template: {
      metadata: { annotations?: Record<string, string> };
      spec: { containers: { env?: { name: string; value?: string; valueFrom?: unknown }[] }[] };
    };
  };
};
const gatewayDeployment = () =>
  client.get<GatewayDeployment>(`/apis/apps/v1/namespaces/${namespace}/deployments/box-gateway`);

/** gateway.trustedProxies of the openclaw.json the operator wrote. */
async function trustedProxies(): Promise<string[] | undefined> {
  const secret = await client.get<KubeObject & { data: Record<string, string> }>(
    `${secrets}/box-gateway-config`,
  );
  const config = JSON.parse(
    Buffer.from(secret?.data["openclaw.json"] ?? "e30=", "base64").toString("utf8"),
  ) as {
    gateway?: { trustedProxies?: string[] };
  };
  return config.gateway?.trustedProxies;
}

beforeAll(async () => {
  certificates = await householdCertificates(host);
  await installCrds(client);
  await createNamespace(client, namespace);
  await createNamespace(client, controllerNamespace);
  operator = await startTestOperator(kubeConfig, namespace, suffix, {
    ingressController: { namespace: controllerNamespace, name: "traefik" },
  });
  await client.create(api, {
    apiVersion: "remram.io/v1alpha1",
    kind: "RemramAppliance",
    metadata: { name: "box", namespace },
    spec: {
      household: {
        id: "home",
        members: [{ id: "alice", identities: [{ channel: "telegram", peer: "123456789" }] }],
      },
      gateway: {
        expose: { type: "Ingress", ingress: { host, tls: { secretName: "household-tls" } } },
        channels: { telegram: { botTokenSecretRef: { name: "chat-bots", key: "telegram" } } },
      },
    },
  });
}, 120_000);

afterAll(async () => {
  await operator?.stop();
  await client.delete(`/api/v1/namespaces/${namespace}`);
  await client.delete(`/api/v1/namespaces/${controllerNamespace}`);
  if (certificates !== undefined) rmSync(certificates.dir, { recursive: true, force: true });
});

describe("the gateway's exposure and channels, reconciled against the real API server", () => {
  it("trusts forwarded requests from the ingress controller's pods only, and follows them as they move", async () => {
    // No controller endpoints yet: trusted from nobody, and the condition says why.
    const unknown = await untilCondition("GatewayExposed", "False", "IngressProxyUnknown");
    expect(getStatusCondition(unknown, "GatewayExposed")?.message).toContain(
      `no endpoints of Service ${controllerNamespace}/traefik`,
    );
    expect(await trustedProxies()).toBeUndefined();
    await client.create(slices, controllerSlice(["10.42.0.7"]));
    // The watch wakes the appliance: no nudge.
    await untilCondition("GatewayExposed", "False", "CertificateMissing");
    await waitFor(async () => ((await trustedProxies())?.join() === "10.42.0.7" ? true : undefined), {
      what: "gateway.trustedProxies = the controller pod's address",
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    const hashBefore = (await gatewayDeployment())?.spec.template.metadata.annotations?.[
      configHashAnnotation
    ];
    // The controller rescheduled: a new address, and the gateway rolls onto it.
    await client.mergePatch(`${slices}/traefik-abcde`, {
      endpoints: [{ addresses: ["10.42.0.31"], conditions: { ready: true } }],
    });
    await waitFor(async () => ((await trustedProxies())?.join() === "10.42.0.31" ? true : undefined), {
      what: "gateway.trustedProxies = the moved pod's address",
      timeoutMs: 30_000,
      intervalMs: 500,
    });
    const hashAfter = (await gatewayDeployment())?.spec.template.metadata.annotations?.[configHashAnnotation];
    expect(hashAfter).toBeDefined();
    expect(hashAfter).not.toBe(hashBefore);
  });

  it("says which Secret is missing, applies the Ingress anyway, and keeps channels off without their token", async () => {
    const waiting = await untilCondition("GatewayExposed", "False", "CertificateMissing");
    expect(getStatusCondition(waiting, "GatewayExposed")?.message).toContain("Secret household-tls");
    expect(getStatusCondition(waiting, "ChannelsReady")).toMatchObject({
      status: "False",
      reason: "ChannelTokenMissing",
    });
    // Neither holds Ready back on its own account: they are informational.
    expect(getStatusCondition(waiting, "Ready")?.reason).not.toMatch(/Certificate|Channel/);
    const ingress = await client.get<KubeObject & { spec: Record<string, unknown> }>(ingressPath);
    expect(ingress?.spec).toMatchObject({
      ingressClassName: "traefik",
      tls: [{ hosts: [host], secretName: "household-tls" }],
    });
    const env = (await gatewayDeployment())?.spec.template.spec.containers[0]?.env ?? [];
    expect(env).toContainEqual({ name: "OPENCLAW_SKIP_CHANNELS", value: "1" });
    expect(env.map((variable) => variable.name)).not.toContain(channelTokenEnv.telegram);
  });

  it("publishes the URL and the CA once the certificate is there, and starts the channel once its token is", async () => {
    const base64 = (name: string) => readFileSync(join(certificates.dir, name)).toString("base64");
    await client.create(secrets, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "household-tls", namespace },
      type: "kubernetes.io/tls",
      data: { "tls.crt": base64("tls.crt"), "tls.key": base64("tls.key"), "ca.crt": base64("ca.crt") },
    });
    const token = await client.create<KubeObject>(secrets, {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "chat-bots", namespace },
      stringData: { telegram: "700000001:AAremramaccesstestbottoken0000000000" },
    });
    await nudge("secrets");
    const exposed = await untilCondition("GatewayExposed", "True", "IngressReady");
    expect(exposed.status?.gateway).toMatchObject({
      url: `https://${host}/`,
      caCertificate: certificates.ca,
    });
    expect(Date.parse(exposed.status?.gateway?.certificateNotAfter ?? "")).toBeGreaterThan(Date.now());
    await untilCondition("ChannelsReady", "True", "ChannelsConfigured");
    const deployment = await waitFor(
      async () => {
        const current = await gatewayDeployment();
        const env = current?.spec.template.spec.containers[0]?.env ?? [];
        return env.some((variable) => variable.name === channelTokenEnv.telegram) ? current : undefined;
      },
      { what: "the gateway's token variable", timeoutMs: 30_000, intervalMs: 500 },
    );
    const env = deployment?.spec.template.spec.containers[0]?.env ?? [];
    expect(env).toContainEqual({
      name: channelTokenEnv.telegram,
      valueFrom: { secretKeyRef: { name: "chat-bots", key: "telegram" } },
    });
    expect(env.map((variable) => variable.name)).not.toContain("OPENCLAW_SKIP_CHANNELS");
    expect(deployment?.spec.template.metadata.annotations?.[channelTokenVersionsAnnotation]).toBe(
      `telegram=${token.metadata.resourceVersion}`,
    );
  });

  it("issues the certificate from a CA of the appliance's own when none is named and cert-manager is absent", async () => {
    await client.mergePatch(`${api}/box`, {
      spec: { gateway: { expose: { ingress: { tls: { secretName: null } } } } },
    });
    const exposed = await waitFor(
      async () => {
        const current = await appliance();
        const condition = getStatusCondition(current, "GatewayExposed");
        const ca = current?.status?.gateway?.caCertificate;
        return condition?.status === "True" && ca !== undefined && ca !== certificates.ca
          ? current
          : undefined;
      },
      { what: "the operator's own CA published", timeoutMs: 30_000, intervalMs: 500 },
    );
    const ca = new X509Certificate(exposed?.status?.gateway?.caCertificate ?? "");
    expect(ca.ca).toBe(true);
    const serving = await client.get<KubeObject & { data: Record<string, string> }>(
      `${secrets}/box-gateway-tls`,
    );
    const certificate = new X509Certificate(Buffer.from(serving?.data["tls.crt"] ?? "", "base64"));
    expect(certificate.checkHost(host)).toBe(host);
    expect(certificate.verify(ca.publicKey)).toBe(true);
    // The CA's key stays in its Secret: the status carries the certificate alone.
    expect(JSON.stringify(exposed?.status)).not.toMatch(/PRIVATE KEY/);
    const ingress = await client.get<KubeObject & { spec: Record<string, unknown> }>(ingressPath);
    expect(ingress?.spec).toMatchObject({ tls: [{ hosts: [host], secretName: "box-gateway-tls" }] });
  });

  it("deletes the Ingress and status.gateway when the spec goes back to ClusterIP", async () => {
    await client.mergePatch(`${api}/box`, {
      spec: { gateway: { expose: { type: "ClusterIP", ingress: null } } },
    });
    await untilCondition("GatewayExposed", "True", "ServiceExposed");
    await waitFor(
      async () =>
        (await client.get(ingressPath)) === undefined && (await appliance())?.status?.gateway === undefined
          ? true
          : undefined,
      { what: "the Ingress and status.gateway gone", timeoutMs: 30_000, intervalMs: 500 },
    );
    // The household's Secret is theirs, and the appliance's CA is kept for devices that trust it: neither deleted.
    expect(await client.get(`${secrets}/household-tls`)).toBeDefined();
    expect(await client.get(`${secrets}/box-gateway-ca`)).toBeDefined();
  });
});
