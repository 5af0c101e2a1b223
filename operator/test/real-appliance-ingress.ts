// The gateway reached as a household device on the LAN reaches a k3s box: https://<host>/ through the node's
// Traefik (docs/testbed-ingress.md), the certificate checked against the CA the operator publishes in the
// appliance's status, the household's gateway token as the bearer. No cert-manager and no certificate named: the
// operator makes a CA of the appliance's own and the serving certificate it signs (gateway-certificates.ts).
// Afterwards the appliance goes back to ClusterIP and the operator removes the Ingress.
import https from "node:https";
import { describe, expect, it } from "vitest";
import { replyText } from "../../test/harness/src/services/openclaw.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { gatewayAccess, kubectl, measured, namespace, node, patchApplianceSpec } from "./real-appliance.js";
import { turnTimeoutMs } from "./real-appliance-conversation.js";

const host = `moltbox.${namespace}.test`;
const tlsSecret = "moltbox-gateway-tls";

/** One request to the node's port 443 for `host` (Host header and SNI), the server's certificate checked against `ca`. */
function viaIngress(
  method: string,
  path: string,
  ca: string,
  headers: Record<string, string> = {},
  body?: string,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const request = https.request(
      {
        host: node.ingress.ip,
        port: 443,
        method,
        path,
        servername: host,
        ca,
        headers: { host, ...headers },
        agent: false,
        timeout: turnTimeoutMs,
      },
      (response) => {
        let text = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          text += chunk;
        });
        response.on("end", () => resolve({ status: response.statusCode ?? 0, body: text }));
      },
    );
    request.on("timeout", () => request.destroy(new Error(`no answer from https://${host}${path}`)));
    request.on("error", reject);
    request.end(body);
  });
}

const patchExpose = (expose: unknown) => patchApplianceSpec({ gateway: { expose } });

interface ApplianceView {
  status?: {
    conditions?: { type: string; status: string; reason: string; message: string }[];
    gateway?: { url?: string; appUrl?: string; caCertificate?: string; certificateNotAfter?: string };
  };
}

/** The gateway pod rolled onto its new openclaw.json (trustedProxies comes and goes with the Ingress). */
const gatewayRolledOut = () =>
  kubectl(
    ["-n", namespace, "rollout", "status", "deployment/moltbox-gateway", "--timeout=300s"],
    undefined,
    310_000,
  );

/** gateway.trustedProxies of the openclaw.json the operator wrote for the gateway. */
async function gatewayTrustedProxies(): Promise<string[] | undefined> {
  const encoded = await kubectl([
    "-n",
    namespace,
    "get",
    "secret",
    "moltbox-gateway-config",
    "-o",
    "jsonpath={.data.openclaw\\.json}",
  ]);
  const config = JSON.parse(Buffer.from(encoded, "base64").toString("utf8")) as {
    gateway?: { trustedProxies?: string[] };
  };
  return config.gateway?.trustedProxies;
}

const appliance = async (): Promise<ApplianceView> =>
  JSON.parse(
    await kubectl(["-n", namespace, "get", "remramappliance", "moltbox", "-o", "json"]),
  ) as ApplianceView;

export function describeIngress(): void {
  describe("the gateway through Traefik over HTTPS", () => {
    it(
      "answers a chat completion at https://<host>/ with the household's token, trusting the CA from the appliance's status",
      async () => {
        const started = Date.now();
        try {
          await patchExpose({ type: "Ingress", ingress: { host } });
          const published = await waitFor(
            async () => {
              const view = await appliance();
              const exposed = view.status?.conditions?.find(
                (condition) => condition.type === "GatewayExposed",
              );
              return exposed?.status === "True" && exposed.reason === "IngressReady"
                ? view.status
                : undefined;
            },
            { what: "GatewayExposed=True/IngressReady", timeoutMs: 60_000, intervalMs: 1_000 },
          );
          expect(published?.gateway?.url).toBe(`https://${host}/`);
          expect(published?.gateway?.appUrl).toBe(`https://${host}/remram/`);
          // The operator's CA, in the status: its certificate only, never a key.
          expect(published?.gateway?.caCertificate).toMatch(/^-----BEGIN CERTIFICATE-----/);
          expect(JSON.stringify(published)).not.toMatch(/PRIVATE KEY/);
          const ingress = JSON.parse(
            await kubectl(["-n", namespace, "get", "ingress", "moltbox-gateway", "-o", "json"]),
          ) as { metadata: { annotations?: Record<string, string> }; spec: Record<string, unknown> };
          expect(ingress.spec).toMatchObject({
            ingressClassName: "traefik",
            tls: [{ hosts: [host], secretName: tlsSecret }],
          });
          expect(ingress.metadata.annotations?.["traefik.ingress.kubernetes.io/router.entrypoints"]).toBe(
            "websecure",
          );
          // The gateway takes X-Forwarded-For from Traefik's pod alone (the operator read it from the Service's
          // EndpointSlice): not from the pod network, where the kubelet's probes come from.
          const traefikPod = await kubectl([
            "-n",
            "kube-system",
            "get",
            "pods",
            "-l",
            "app.kubernetes.io/name=traefik",
            "-o",
            "jsonpath={.items[*].status.podIP}",
          ]);
          expect(await gatewayTrustedProxies()).toEqual(traefikPod.trim().split(" "));
          await gatewayRolledOut();
          // What a household device does: trust the published CA, then talk to the gateway by its name.
          const trusted = published?.gateway?.caCertificate ?? "";
          // Until Traefik has read the Secret it presents its default certificate, which the CA refuses.
          await waitFor(
            async () =>
              (await viaIngress("GET", "/healthz", trusted).catch(() => undefined))?.status === 200
                ? true
                : undefined,
            { what: `https://${host}/healthz through Traefik`, timeoutMs: 60_000, intervalMs: 1_000 },
          );
          measured.ingressReadyMs = Date.now() - started;
          const { token } = await gatewayAccess();
          const turnStarted = Date.now();
          const answer = await viaIngress(
            "POST",
            "/v1/chat/completions",
            trusted,
            { authorization: `Bearer ${token}`, "content-type": "application/json" },
            JSON.stringify({
              // The few-shot agent: a second's answer, where the main agent's SmolLM2 takes a minute.
              model: "openclaw/reader",
              user: "ingress-check",
              messages: [{ role: "user", content: "Say hello." }],
            }),
          );
          expect(answer.status, answer.body).toBe(200);
          expect(replyText(JSON.parse(answer.body))).not.toBe("");
          measured.ingressTurnMs = Date.now() - turnStarted;
          // Without the token the gateway refuses, through the same route.
          const anonymous = await viaIngress(
            "POST",
            "/v1/chat/completions",
            trusted,
            {
              "content-type": "application/json",
            },
            "{}",
          );
          expect(anonymous.status).toBe(401);

          // remram-app through the same front door: its pages and API under /remram/, the rest still the gateway's.
          const appPage = await viaIngress("GET", "/remram/", trusted);
          expect(appPage.status, appPage.body).toBe(200);
          expect(appPage.body).toContain('src="app.js"');
          const appScript = await viaIngress("GET", "/remram/app.js", trusted);
          expect(appScript.status).toBe(200);
          const appSignIn = await viaIngress("GET", "/remram/api/me", trusted);
          expect(appSignIn.status).toBe(401);
          expect(JSON.parse(appSignIn.body)).toMatchObject({
            message: "sign in first: no credential was presented",
          });
          expect((await viaIngress("GET", "/healthz", trusted)).status).toBe(200);
        } finally {
          // Back to the Service alone: the operator deletes the Ingress it made (and keeps the CA's Secret).
          await patchExpose({ type: "ClusterIP", ingress: null });
        }
        await waitFor(
          async () => {
            const ingresses = await kubectl([
              "-n",
              namespace,
              "get",
              "ingress",
              "-o",
              "jsonpath={.items[*].metadata.name}",
            ]);
            return ingresses.trim() === "" && (await appliance()).status?.gateway === undefined
              ? true
              : undefined;
          },
          {
            what: "the gateway's Ingress deleted and status.gateway gone",
            timeoutMs: 60_000,
            intervalMs: 1_000,
          },
        );
        // Trusted from nobody again, and the gateway back on that config before the next suites talk to it.
        expect(await gatewayTrustedProxies()).toBeUndefined();
        await gatewayRolledOut();
        measured.ingressSuiteMs = Date.now() - started;
      },
      turnTimeoutMs + 800_000,
    );
  });
}
