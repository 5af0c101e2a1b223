// The ingress controller on the real node: Ingresses of the default class `traefik` answer on the node's address
// (ports 80 and 443) by their Host rules, with the certificate of their TLS Secret, as on a k3s box.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { PeerCertificate, TLSSocket } from "node:tls";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../../inject.js";
import { waitFor } from "../../wait.js";
import { kubectl as runKubectl } from "../kubectl.js";
import { busyboxPod, httpdScript } from "./fixtures.js";

const run = promisify(execFile);
const kubernetes = testbedEndpoints("kubernetes");
const node = testbedEndpoints("node");
const namespace = `ingress-${randomBytes(3).toString("hex")}`;
const webHost = `web.${namespace}.test`;
const secureHost = `secure.${namespace}.test`;
const certDir = mkdtempSync(join(tmpdir(), "remram-ingress-"));

const kubectl = (args: readonly string[], input?: object): Promise<string> =>
  runKubectl(
    kubernetes.kubeconfig,
    ["-n", namespace, ...args],
    input === undefined ? undefined : JSON.stringify(input),
  );
const apply = (manifest: object): Promise<string> => kubectl(["apply", "-f", "-"], manifest);

/** An Ingress that sends every path of `host` to the Service web; no class, so the default one applies. */
function ingress(name: string, host: string, tlsSecret?: string): object {
  return {
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name },
    spec: {
      ...(tlsSecret ? { tls: [{ hosts: [host], secretName: tlsSecret }] } : {}),
      rules: [
        {
          host,
          http: {
            paths: [
              { path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } },
            ],
          },
        },
      ],
    },
  };
}

interface Answer {
  status: number;
  body: string;
  /** The certificate the server presented (HTTPS only). */
  certificate?: PeerCertificate;
}

/** GET `url` with the given Host header (and SNI name for https, the certificate checked against `ca`). */
function get(url: string, host: string, ca?: string): Promise<Answer> {
  const target = new URL(url);
  const options = {
    host: target.hostname,
    path: target.pathname,
    headers: { host },
    agent: false,
    timeout: 5_000,
  };
  return new Promise((resolve, reject) => {
    const onResponse = (response: http.IncomingMessage): void => {
      const socket = response.socket as Partial<TLSSocket>;
      let body = "";
      response.setEncoding("utf8");
      response.on("data", (chunk: string) => {
        body += chunk;
      });
      response.on("end", () =>
        resolve({ status: response.statusCode ?? 0, body, certificate: socket.getPeerCertificate?.() }),
      );
    };
    const request =
      target.protocol === "https:"
        ? https.request({ ...options, servername: host, ca }, onResponse)
        : http.request(options, onResponse);
    request.on("timeout", () => request.destroy(new Error(`no answer from ${url} within 5 s`)));
    request.on("error", reject);
    request.end();
  });
}

/** Until the route is in Traefik's configuration: a new Ingress takes a moment to reach it. */
const served = (url: string, host: string, ca?: string): Promise<Answer> =>
  waitFor(
    async () => {
      const answer = await get(url, host, ca);
      return answer.status === 200 ? answer : undefined;
    },
    { what: `${host} through the ingress at ${url}`, timeoutMs: 30_000, intervalMs: 500 },
  );

beforeAll(async () => {
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "ec",
    "-pkeyopt",
    "ec_paramgen_curve:prime256v1",
    "-nodes",
    "-days",
    "1",
    "-subj",
    `/CN=${secureHost}`,
    "-addext",
    `subjectAltName=DNS:${secureHost}`,
    "-keyout",
    join(certDir, "tls.key"),
    "-out",
    join(certDir, "tls.crt"),
  ]);
  const base64 = (file: string): string => readFileSync(join(certDir, file)).toString("base64");
  await apply({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: namespace, labels: { "pod-security.kubernetes.io/enforce": "restricted" } },
  });
  await apply(busyboxPod(node, "web", { app: "web" }, httpdScript("hello-through-ingress")));
  await apply({
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web" },
    spec: { selector: { app: "web" }, ports: [{ port: 80, targetPort: 8080 }] },
  });
  await apply({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "secure-tls" },
    type: "kubernetes.io/tls",
    data: { "tls.crt": base64("tls.crt"), "tls.key": base64("tls.key") },
  });
  await apply(ingress("web", webHost));
  await apply(ingress("secure", secureHost, "secure-tls"));
  await kubectl(["wait", "--for=condition=Ready", "pod/web", "--timeout=90s"]);
}, 180_000);

afterAll(async () => {
  rmSync(certDir, { recursive: true, force: true });
  await runKubectl(kubernetes.kubeconfig, ["delete", "namespace", namespace, "--wait=false"]);
});

describe("the ingress controller on the real node", () => {
  it("routes a Host rule to its Service's pod on the node's port 80", async () => {
    expect(node.ingress.http).toBe(`http://${node.ip}`);
    const answer = await served(`${node.ingress.http}/`, webHost);
    expect(answer.body).toBe("hello-through-ingress\n");
  });

  it("answers 404 for a host no Ingress names", async () => {
    await served(`${node.ingress.http}/`, webHost);
    const answer = await get(`${node.ingress.http}/`, `unknown.${namespace}.test`);
    expect(answer.status).toBe(404);
  });

  it("serves HTTPS on port 443 with the certificate from the Ingress's TLS Secret", async () => {
    const ca = readFileSync(join(certDir, "tls.crt"), "utf8");
    // Until Traefik has the Secret it presents its own default certificate, which `ca` rejects.
    const answer = await served(`${node.ingress.https}/`, secureHost, ca);
    expect(answer.body).toBe("hello-through-ingress\n");
    expect(answer.certificate?.subject.CN).toBe(secureHost);
    expect(answer.certificate?.subjectaltname).toBe(`DNS:${secureHost}`);
  });

  it("gives Ingresses without a class the default class and the node's address in their status", async () => {
    const status = await waitFor(
      async () => {
        const fields = await kubectl([
          "get",
          "ingress",
          "web",
          "-o",
          "jsonpath={.spec.ingressClassName} {.status.loadBalancer.ingress[0].ip}",
        ]);
        return fields.split(" ")[1] ? fields : undefined;
      },
      { what: "the Ingress web's load-balancer status", timeoutMs: 30_000, intervalMs: 500 },
    );
    expect(status).toBe(`${node.ingress.className} ${node.ingress.ip}`);
  });

  it("keeps the port mappings' rules inside the node's network namespace", async () => {
    const inNode = await run("nsenter", [
      `--net=/run/netns/${node.namespace}`,
      "--",
      "iptables-save",
      "-t",
      "nat",
    ]);
    const onHost = await run("iptables-save", ["-t", "nat"]);
    expect(inNode.stdout).toMatch(/-A CNI-DN-\S+ .*--dport 80 .*--to-destination 10\.42\.\d+\.\d+:8000/);
    expect(inNode.stdout).toMatch(/-A CNI-DN-\S+ .*--dport 443 .*--to-destination 10\.42\.\d+\.\d+:8443/);
    expect(onHost.stdout).not.toContain("CNI-HOSTPORT");
  });
});
