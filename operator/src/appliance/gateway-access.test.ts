import { describe, expect, it } from "vitest";
import { remramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import type { KubeObject } from "../runtime/kube-client.js";
import { gatewayTls } from "./children/gateway-expose.js";
import type { IngressProxies } from "./children/shared.js";
import {
  CertManagerProbe,
  certificateAge,
  channelsCondition,
  channelTokens,
  gatewayExposure,
  optionalApiTtlMs,
  type TlsSecretObservation,
} from "./gateway-access.js";
import {
  servingHost,
  servingNotAfter,
  servingNotBefore,
  servingPem,
  testCaPem,
} from "./testing/certificates.js";

const day = 86_400_000;

describe("a certificate's age", () => {
  const start = Date.parse("2027-01-01T00:00:00Z");
  const end = start + 90 * day;
  it("is due for renewal past two thirds of its lifetime, and expired at notAfter", () => {
    expect(certificateAge(start - 1, start, end)).toBe("not-yet-valid");
    expect(certificateAge(start, start, end)).toBe("valid");
    expect(certificateAge(start + 60 * day - 1, start, end)).toBe("valid");
    expect(certificateAge(start + 60 * day, start, end)).toBe("renewal-due");
    expect(certificateAge(end - 1, start, end)).toBe("renewal-due");
    expect(certificateAge(end, start, end)).toBe("expired");
  });
});

describe("GatewayExposed and status.gateway", () => {
  const exposure = (
    expose: unknown,
    options: {
      certManager?: boolean;
      secret?: TlsSecretObservation;
      now?: number;
      nodePort?: number;
      ingressProxies?: IngressProxies | null;
    } = {},
  ) => {
    const spec = remramApplianceSpec.parse({ gateway: { expose } });
    const ingressProxies =
      options.ingressProxies === undefined ? traefikFound : (options.ingressProxies ?? undefined);
    return gatewayExposure({
      name: "box",
      spec,
      tls: gatewayTls({ name: "box", spec }, options.certManager ?? false),
      ...(options.secret === undefined ? {} : { secret: options.secret }),
      ...(options.nodePort === undefined ? {} : { nodePort: options.nodePort }),
      ...(ingressProxies === undefined ? {} : { ingressProxies }),
      now: options.now ?? servingNotBefore + day,
    });
  };
  const traefikFound: IngressProxies = { service: "kube-system/traefik", addresses: ["10.42.0.7"] };
  const ingress = (tls: Record<string, unknown> = {}) => ({
    type: "Ingress",
    ingress: { host: servingHost, tls },
  });
  const issued: TlsSecretObservation = { exists: true, certificate: servingPem, ca: testCaPem };

  it("says where a Service answers", () => {
    expect(exposure({}).condition).toMatchObject({
      status: "True",
      reason: "ServiceExposed",
      message: expect.stringContaining("inside the cluster only"),
    });
    expect(exposure({ type: "NodePort" }, { nodePort: 31234 }).condition.message).toContain("port 31234");
    expect(exposure({ type: "LoadBalancer" }).condition.message).toContain("18789");
    expect(exposure({}).status).toBeUndefined();
  });

  it("publishes the URL, the CA (never a key) and the expiry once the certificate is there", () => {
    const { condition, status } = exposure(ingress(), { certManager: true, secret: issued });
    expect(condition).toMatchObject({ status: "True", reason: "IngressReady" });
    expect(condition.message).toContain(`https://${servingHost}/ through ingress class traefik`);
    expect(status).toEqual({
      url: `https://${servingHost}/`,
      appUrl: `https://${servingHost}/remram/`,
      caCertificate: testCaPem,
      certificateNotAfter: new Date(servingNotAfter).toISOString().replace(/\.\d{3}Z$/, "Z"),
    });
    expect(JSON.stringify(status)).not.toContain("PRIVATE KEY");
  });

  it("waits for the certificate's issuer, and says what is missing without it", () => {
    // No issuer named: the operator's own CA issues it, with or without cert-manager.
    for (const certManager of [true, false]) {
      const pending = exposure(ingress(), { certManager, secret: { exists: false } }).condition;
      expect(pending).toMatchObject({ status: "Unknown", reason: "CertificatePending" });
      expect(pending.message).toMatch(/the operator has not issued box-gateway-tls/);
    }
    expect(
      exposure(ingress({ issuerRef: { name: "ca" } }), { certManager: true, secret: { exists: false } })
        .condition.message,
    ).toMatch(/cert-manager has not issued/);
    expect(
      exposure(ingress({ issuerRef: { name: "ca" } }), { secret: { exists: false } }).condition,
    ).toMatchObject({
      status: "False",
      reason: "CertManagerMissing",
    });
    expect(exposure(ingress({ secretName: "mine" }), { secret: { exists: false } }).condition.message).toBe(
      "Secret mine (spec.gateway.expose.ingress.tls.secretName) does not exist",
    );
  });

  it("refuses a certificate for another host, or one out of its lifetime; warns when renewal is due", () => {
    const other = exposure(
      { type: "Ingress", ingress: { host: "other.home.arpa", tls: { secretName: "mine" } } },
      {
        secret: issued,
      },
    ).condition;
    expect(other).toMatchObject({ status: "False", reason: "CertificateInvalid" });
    expect(other.message).toContain("is not for other.home.arpa");
    const expired = exposure(ingress({ secretName: "mine" }), { secret: issued, now: servingNotAfter + 1 });
    expect(expired.condition).toMatchObject({ status: "False", reason: "CertificateInvalid" });
    expect(expired.condition.message).toMatch(/expired at .*: renew it/);
    const due = exposure(ingress({ secretName: "mine" }), { secret: issued, now: servingNotAfter - day });
    expect(due.condition).toMatchObject({ status: "True", reason: "IngressReady" });
    expect(due.condition.message).toContain("past two thirds of its lifetime: renew Secret mine");
  });

  it("is False while the gateway cannot know the ingress controller's address, since it would refuse every request", () => {
    const missing = exposure(ingress(), {
      secret: issued,
      ingressProxies: { service: "kube-system/traefik", addresses: [] },
    });
    expect(missing.condition).toMatchObject({ status: "False", reason: "IngressProxyUnknown" });
    expect(missing.condition.message).toContain("no endpoints of Service kube-system/traefik");
    expect(missing.status).toEqual({
      url: `https://${servingHost}/`,
      appUrl: `https://${servingHost}/remram/`,
    });
    const notTold = exposure(ingress({ enabled: false }), { ingressProxies: null }).condition;
    expect(notTold).toMatchObject({ status: "False", reason: "IngressProxyUnknown" });
    expect(notTold.message).toContain("ingressController is empty");
    // The spec's own list stands in for discovery.
    const listed = exposure(
      { type: "Ingress", ingress: { host: servingHost, trustedProxies: ["192.168.1.10"] } },
      { secret: issued, ingressProxies: null },
    );
    expect(listed.condition).toMatchObject({ status: "True", reason: "IngressReady" });
  });

  it("warns that plain HTTP carries the token in clear", () => {
    const { condition, status } = exposure(ingress({ enabled: false }));
    expect(condition).toMatchObject({ status: "True", reason: "IngressReady" });
    expect(condition.message).toContain("in clear");
    expect(status).toEqual({ url: `http://${servingHost}/`, appUrl: `http://${servingHost}/remram/` });
  });

  it("names remram-app's address on the same host only while the app is on", () => {
    const spec = remramApplianceSpec.parse({ gateway: { expose: ingress() }, app: { enabled: false } });
    const off = gatewayExposure({
      name: "box",
      spec,
      tls: gatewayTls({ name: "box", spec }, true),
      secret: issued,
      ingressProxies: traefikFound,
      now: servingNotBefore + day,
    });
    expect(off.status?.url).toBe(`https://${servingHost}/`);
    expect(off.status).not.toHaveProperty("appUrl");
  });
});

/** A client whose GETs answer from a map of paths; counts them. */
function fakeClient(objects: Record<string, unknown>) {
  let gets = 0;
  return {
    get gets() {
      return gets;
    },
    async get<T>(path: string): Promise<T | undefined> {
      gets++;
      return objects[path] as T | undefined;
    },
  };
}

describe("cert-manager's presence", () => {
  const crdPath = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions/certificates.cert-manager.io";
  it("is its Established Certificate CRD, asked again only after the TTL", async () => {
    let now = 0;
    const objects: Record<string, unknown> = {};
    const client = fakeClient(objects);
    const probe = new CertManagerProbe(client, () => now);
    expect(await probe.installed()).toBe(false);
    objects[crdPath] = {
      metadata: { name: "x" },
      status: { conditions: [{ type: "Established", status: "True" }] },
    };
    now = optionalApiTtlMs - 1;
    expect(await probe.installed()).toBe(false);
    expect(client.gets).toBe(1);
    now = optionalApiTtlMs;
    expect(await probe.installed()).toBe(true);
    expect(client.gets).toBe(2);
  });
});

describe("the channels' tokens and ChannelsReady", () => {
  const spec = remramApplianceSpec.parse({
    household: {
      id: "home",
      members: [
        {
          id: "alice",
          identities: [
            { channel: "telegram", peer: "1" },
            { channel: "discord", peer: "2" },
          ],
        },
      ],
    },
    gateway: {
      channels: {
        telegram: { botTokenSecretRef: { name: "bots", key: "telegram" } },
        discord: { tokenSecretRef: { name: "discord-bot", key: "token" } },
      },
    },
  });
  const secret = (data: Record<string, string>, resourceVersion: string): KubeObject =>
    ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "s", resourceVersion },
      data: Object.fromEntries(
        Object.entries(data).map(([key, value]) => [key, Buffer.from(value).toString("base64")]),
      ),
    }) as KubeObject;

  it("are found by Secret and key, and a missing one keeps its channel off with the reason", async () => {
    const client = fakeClient({
      "/api/v1/namespaces/home/secrets/bots": secret({ telegram: "123:abc" }, "41"),
    });
    const tokens = await channelTokens(client, "home", spec);
    expect(tokens).toEqual({
      versions: { telegram: "41" },
      problems: ["discord: Secret discord-bot (spec.gateway.channels.discord) does not exist"],
    });
    expect(channelsCondition(spec, tokens.versions, tokens.problems)).toMatchObject({
      status: "False",
      reason: "ChannelTokenMissing",
      message: expect.stringContaining("on: telegram (1 member identities)"),
    });
  });

  it("count an empty key as missing, and are all there when both hold a token", async () => {
    const empty = fakeClient({ "/api/v1/namespaces/home/secrets/bots": secret({ telegram: "" }, "1") });
    expect((await channelTokens(empty, "home", spec)).problems[0]).toBe(
      "telegram: Secret bots has no key telegram",
    );
    const both = fakeClient({
      "/api/v1/namespaces/home/secrets/bots": secret({ telegram: "t" }, "41"),
      "/api/v1/namespaces/home/secrets/discord-bot": secret({ token: "d" }, "7"),
    });
    const tokens = await channelTokens(both, "home", spec);
    expect(channelsCondition(spec, tokens.versions, tokens.problems)).toMatchObject({
      status: "True",
      reason: "ChannelsConfigured",
    });
  });

  it("are off without channels", () => {
    expect(channelsCondition(remramApplianceSpec.parse({}), {}, [])).toMatchObject({
      status: "False",
      reason: "ChannelsOff",
    });
  });
});
