// An OpenSearch secured the way a household's bigger cluster is: the security plugin, TLS on HTTP and transport
// with a CA of its own, basic auth, one user with a role limited to Cortex's indices. The external-OpenSearch suite
// starts one for itself (not a shared test-bed service: nothing else needs it). Installed by
// hack/install-opensearch-security.sh; certificates, users and settings are written per start.
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { request } from "node:https";
import { join } from "node:path";
import { promisify } from "node:util";
import { runDir } from "../paths.js";
import { readInstallation, startOpenSearchNode } from "./opensearch.js";
import type { Started, StartOptions } from "./types.js";

const run = promisify(execFile);

export interface SecuredOpenSearchEndpoints {
  /** https://127.0.0.1:<port>, served with a certificate of caCertificate's CA (SAN 127.0.0.1 and localhost). */
  url: string;
  /** PEM of the CA that signed the node's certificate. */
  caCertificate: string;
  /** PEM of a CA that signed nothing here: a client trusting only it must refuse the node. */
  untrustedCaCertificate: string;
  /** Cortex's user: the remram_cortex role, on remram* indices only. */
  username: string;
  password: string;
  /** The cluster's administrator (all_access): what a household moving its data in holds. */
  admin: { username: string; password: string };
}

/** The distinguished names the node's settings trust; openssl's subjects below produce them. */
const nodeDn = "CN=node,O=remram-test";
const adminDn = "CN=admin,O=remram-test";

/** The security plugin's settings for a single node with TLS everywhere and its security index made from files. */
export function renderSecuritySettings(): string {
  return `${[
    "plugins.security.ssl.transport.pemcert_filepath: node.pem",
    "plugins.security.ssl.transport.pemkey_filepath: node-key.pem",
    "plugins.security.ssl.transport.pemtrustedcas_filepath: ca.pem",
    "plugins.security.ssl.transport.enforce_hostname_verification: false",
    "plugins.security.ssl.http.enabled: true",
    "plugins.security.ssl.http.pemcert_filepath: node.pem",
    "plugins.security.ssl.http.pemkey_filepath: node-key.pem",
    "plugins.security.ssl.http.pemtrustedcas_filepath: ca.pem",
    // The security index is created from config/opensearch-security/*.yml at first start (no securityadmin run).
    "plugins.security.allow_default_init_securityindex: true",
    `plugins.security.authcz.admin_dn: ["${adminDn}"]`,
    `plugins.security.nodes_dn: ["${nodeDn}"]`,
    "plugins.security.audit.type: noop",
  ].join("\n")}\n`;
}

/**
 * Cortex's user with its role (what Cortex does on its indices: create, map, write, search, delete by query, drop,
 * and their templates, plus cluster health; nothing on other indices; the same role is in docs/operator.md), and
 * an administrator with all_access.
 */
export function renderUsers(
  users: { cortex: { username: string; hash: string }; admin: { username: string; hash: string } },
  indexPatterns: readonly string[],
): { internalUsers: string; roles: string; rolesMapping: string } {
  const patterns = indexPatterns.map((pattern) => JSON.stringify(pattern)).join(", ");
  const user = ({ username, hash }: { username: string; hash: string }) =>
    `${username}:\n  hash: "${hash}"\n  reserved: false\n`;
  return {
    internalUsers: `_meta: {type: "internalusers", config_version: 2}\n${user(users.cortex)}${user(users.admin)}`,
    roles: [
      '_meta: {type: "roles", config_version: 2}',
      "remram_cortex:",
      "  reserved: false",
      '  cluster_permissions: ["cluster_monitor", "cluster_composite_ops", "indices:admin/index_template/*", "indices:admin/template/*"]',
      "  index_permissions:",
      `    - index_patterns: [${patterns}]`,
      '      allowed_actions: ["indices_all"]',
      "",
    ].join("\n"),
    rolesMapping: [
      '_meta: {type: "rolesmapping", config_version: 2}',
      "remram_cortex:",
      "  reserved: false",
      `  users: ["${users.cortex.username}"]`,
      "all_access:",
      "  reserved: false",
      `  users: ["${users.admin.username}"]`,
      "",
    ].join("\n"),
  };
}

/** A CA (key and certificate) in `dir` as <name>-key.pem and <name>.pem. */
async function makeCa(dir: string, name: string, subject: string): Promise<void> {
  await run("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "2",
    "-subj",
    subject,
    "-keyout",
    join(dir, `${name}-key.pem`),
    "-out",
    join(dir, `${name}.pem`),
  ]);
}

/** A certificate signed by ca.pem as <name>.pem, its PKCS#8 key (the plugin reads no other) as <name>-key.pem. */
async function makeSigned(dir: string, name: string, subject: string, extensions: string): Promise<void> {
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, extensions);
  await run("openssl", [
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-subj",
    subject,
    "-keyout",
    join(dir, `${name}-key.pem`),
    "-out",
    join(dir, `${name}.csr`),
  ]);
  await run("openssl", [
    "x509",
    "-req",
    "-in",
    join(dir, `${name}.csr`),
    "-CA",
    join(dir, "ca.pem"),
    "-CAkey",
    join(dir, "ca-key.pem"),
    "-CAcreateserial",
    "-days",
    "2",
    "-extfile",
    extFile,
    "-out",
    join(dir, `${name}.pem`),
  ]);
}

/** The node's CA and certificate, and a CA that signed nothing here, in `dir`. */
async function makeCertificates(dir: string): Promise<void> {
  await makeCa(dir, "ca", "/O=remram-test/CN=Remram test CA");
  await makeCa(dir, "untrusted-ca", "/O=somebody-else/CN=Another CA");
  await makeSigned(
    dir,
    "node",
    "/O=remram-test/CN=node",
    [
      "subjectAltName=IP:127.0.0.1,DNS:localhost",
      "basicConstraints=CA:FALSE",
      "keyUsage=digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth,clientAuth",
    ].join("\n"),
  );
}

/** GET `url` over TLS trusting `ca`, with basic auth; the status code, or the TLS or socket error's code. */
export function securedGet(
  url: string,
  ca: string,
  auth: { username: string; password: string },
): Promise<number | string> {
  return new Promise((resolve) => {
    const req = request(
      url,
      { ca, auth: `${auth.username}:${auth.password}`, timeout: 5_000 },
      (response) => {
        response.resume();
        resolve(response.statusCode ?? 0);
      },
    );
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
    req.on("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    req.end();
  });
}

/** Start a secured node; healthy (yellow or green, security index made) before it resolves. */
export async function startSecuredOpenSearch(
  options: StartOptions & { indexPatterns?: readonly string[] } = {},
): Promise<Started<SecuredOpenSearchEndpoints>> {
  const installation = readInstallation("-security");
  const username = "remram";
  const password = randomBytes(18).toString("base64url");
  const admin = { username: "admin", password: randomBytes(18).toString("base64url") };
  const hash = async (secret: string): Promise<string> => {
    const { stdout } = await run(
      join(installation.home, "plugins", "opensearch-security", "tools", "hash.sh"),
      ["-p", secret],
      { env: { ...process.env, OPENSEARCH_JAVA_HOME: installation.javaHome } },
    );
    const bcrypt = stdout.trim().split("\n").at(-1) ?? "";
    if (!bcrypt.startsWith("$2")) throw new Error(`hash.sh gave no bcrypt hash: ${stdout}`);
    return bcrypt;
  };
  const users = renderUsers(
    {
      cortex: { username, hash: await hash(password) },
      admin: { username: admin.username, hash: await hash(admin.password) },
    },
    options.indexPatterns ?? ["remram*"],
  );
  // Made before the node dir exists (its config is copied from the installation when it starts).
  mkdirSync(runDir, { recursive: true });
  const certDir = mkdtempSync(join(runDir, "opensearch-certs-"));
  let pems: Record<"ca" | "untrustedCa" | "node" | "nodeKey", string>;
  try {
    await makeCertificates(certDir);
    const read = (file: string): string => readFileSync(join(certDir, file), "utf8");
    pems = {
      ca: read("ca.pem"),
      untrustedCa: read("untrusted-ca.pem"),
      node: read("node.pem"),
      nodeKey: read("node-key.pem"),
    };
  } finally {
    rmSync(certDir, { recursive: true, force: true });
  }
  const auth = { username, password };
  const started = await startOpenSearchNode(
    {
      installation,
      scheme: "https",
      configure: (configDir) => {
        writeFileSync(join(configDir, "ca.pem"), pems.ca);
        writeFileSync(join(configDir, "node.pem"), pems.node);
        writeFileSync(join(configDir, "node-key.pem"), pems.nodeKey, { mode: 0o600 });
        const security = join(configDir, "opensearch-security");
        writeFileSync(join(security, "internal_users.yml"), users.internalUsers);
        writeFileSync(join(security, "roles.yml"), users.roles);
        writeFileSync(join(security, "roles_mapping.yml"), users.rolesMapping);
        return renderSecuritySettings();
      },
      healthy: async (url) =>
        (await securedGet(`${url}/_cluster/health?wait_for_status=yellow&timeout=2s`, pems.ca, auth)) === 200,
    },
    options,
  );
  return {
    endpoints: {
      url: started.endpoints.url,
      caCertificate: pems.ca,
      untrustedCaCertificate: pems.untrustedCa,
      ...auth,
      admin,
    },
    processes: started.processes,
    stop: started.stop,
  };
}
