/**
 * OpenSearchReady for an external cluster: the operator asks the cluster itself, with Cortex's URL, credentials and
 * CA bundle, so a wrong CA, a wrong password or a cluster that is down each get a reason of their own instead of a
 * Cortex that is only "not ready". The request is the shell; what its outcome means is the pure part.
 */
import { request as httpRequest } from "node:http";
import { request as httpsRequest } from "node:https";
import { ApplianceReason, type RemramApplianceSpec } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";
import type { KubeClient, KubeObject } from "../runtime/kube-client.js";
import { decodeSecretValue } from "./gateway-access.js";

/** What one request to the cluster's root came back with. */
export type ProbeOutcome =
  | { kind: "answered"; status: number; health?: string }
  | { kind: "failed"; code: string; message: string }
  | { kind: "secret"; problem: string };

/** TLS verification failures (Node's codes): the certificate is not one the given CA bundle vouches for. */
const untrustedCodes = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_SIGNATURE_FAILURE",
  "CERT_HAS_EXPIRED",
  "CERT_NOT_YET_VALID",
  "CERT_UNTRUSTED",
  "CERT_REJECTED",
  "ERR_TLS_CERT_ALTNAME_INVALID",
]);

/** The condition an outcome means (pure). */
export function externalOpenSearchCondition(url: string, outcome: ProbeOutcome): ConditionInput {
  const type = "OpenSearchReady";
  const condition = (status: "True" | "False", reason: ApplianceReason, message: string): ConditionInput => ({
    type,
    status,
    reason,
    message: message.slice(0, 1024),
  });
  if (outcome.kind === "secret") {
    return condition("False", ApplianceReason.OpenSearchSecretMissing, outcome.problem);
  }
  if (outcome.kind === "failed") {
    if (untrustedCodes.has(outcome.code)) {
      return condition(
        "False",
        ApplianceReason.OpenSearchCertificateUntrusted,
        `${url} presented a certificate the CA bundle does not vouch for (${outcome.code}): set spec.opensearch.external.caSecretRef to the cluster's CA`,
      );
    }
    return condition(
      "False",
      ApplianceReason.OpenSearchUnreachable,
      `${url} did not answer: ${outcome.message}`,
    );
  }
  if (outcome.status === 401) {
    return condition(
      "False",
      ApplianceReason.OpenSearchUnauthorized,
      `${url} refused the credentials of spec.opensearch.external.credentialsSecretRef (401): check the username and password`,
    );
  }
  if (outcome.status === 403) {
    return condition(
      "False",
      ApplianceReason.OpenSearchForbidden,
      `${url} knows the user but denies it the cluster's health (403): map it to a role like docs/operator.md's remram_cortex`,
    );
  }
  if (outcome.status >= 200 && outcome.status < 300) {
    return condition(
      "True",
      ApplianceReason.OpenSearchConnected,
      `connected to ${url}${outcome.health ? ` (cluster health ${outcome.health})` : ""}`,
    );
  }
  return condition("False", ApplianceReason.OpenSearchUnreachable, `${url} answered ${outcome.status}`);
}

export interface ExternalTarget {
  url: string;
  credentials?: { username: string; password: string };
  ca?: string;
  /** The Secrets' resourceVersions: a change asks again at once, and restarts Cortex (it reads them at start). */
  version: string;
}

/** The cluster's URL with the credentials and CA its Secrets hold, or what is missing from them. */
export async function readExternalTarget(
  client: Pick<KubeClient, "get">,
  namespace: string,
  spec: RemramApplianceSpec,
): Promise<ExternalTarget | { problem: string } | undefined> {
  const external = spec.opensearch.external;
  if (spec.opensearch.mode !== "external" || external === undefined) return undefined;
  const read = (name: string) => client.get<KubeObject>(`/api/v1/namespaces/${namespace}/secrets/${name}`);
  const versions: string[] = [];
  let credentials: ExternalTarget["credentials"];
  if (external.credentialsSecretRef) {
    const { name } = external.credentialsSecretRef;
    const secret = await read(name);
    const username = decodeSecretValue(secret, "username");
    const password = decodeSecretValue(secret, "password");
    if (secret === undefined) return { problem: `Secret ${name} (credentialsSecretRef) does not exist` };
    if (!username || !password) return { problem: `Secret ${name} needs both keys username and password` };
    credentials = { username, password };
    versions.push(secret.metadata.resourceVersion ?? "");
  }
  let ca: string | undefined;
  if (external.caSecretRef) {
    const { name, key } = external.caSecretRef;
    const secret = await read(name);
    if (secret === undefined) return { problem: `Secret ${name} (caSecretRef) does not exist` };
    ca = decodeSecretValue(secret, key);
    if (!ca?.includes("-----BEGIN CERTIFICATE-----")) {
      return { problem: `Secret ${name} has no PEM certificate under key ${key}` };
    }
    versions.push(secret.metadata.resourceVersion ?? "");
  }
  return {
    url: external.url,
    ...(credentials ? { credentials } : {}),
    ...(ca ? { ca } : {}),
    version: versions.join("/"),
  };
}

/** The health status of a /_cluster/health answer, if it is one. */
function healthOf(body: string): { health?: string } {
  try {
    const status = (JSON.parse(body) as { status?: unknown }).status;
    return typeof status === "string" ? { health: status.slice(0, 16) } : {};
  } catch {
    return {};
  }
}

/** GET the cluster's health (any role with cluster_monitor may read it) with the target's credentials and CA. */
export function probeExternalOpenSearch(target: ExternalTarget, timeoutMs = 5_000): Promise<ProbeOutcome> {
  return new Promise((resolve) => {
    const url = new URL(target.url);
    const request = url.protocol === "https:" ? httpsRequest : httpRequest;
    const auth = target.credentials
      ? `${target.credentials.username}:${target.credentials.password}`
      : undefined;
    const req = request(
      new URL("/_cluster/health", url),
      { timeout: timeoutMs, ...(auth ? { auth } : {}), ...(target.ca ? { ca: target.ca } : {}) },
      (response) => {
        let body = "";
        response.setEncoding("utf8");
        response.on("data", (chunk: string) => {
          if (body.length < 4096) body += chunk;
        });
        response.on("end", () => {
          const status = response.statusCode ?? 0;
          resolve({ kind: "answered", status, ...healthOf(body) });
        });
      },
    );
    req.on("timeout", () =>
      req.destroy(Object.assign(new Error(`no answer within ${timeoutMs} ms`), { code: "ETIMEDOUT" })),
    );
    req.on("error", (error: NodeJS.ErrnoException) =>
      resolve({ kind: "failed", code: error.code ?? "ERROR", message: error.message }),
    );
    req.end();
  });
}

/** How long an answer is trusted: a fixed Secret is noticed at once (its version changes), a cluster coming back within this. */
export const externalProbeTtlMs = 30_000;

/** OpenSearchReady of each external appliance, asked again after externalProbeTtlMs or when its Secrets change. */
export class ExternalOpenSearchProbe {
  private readonly known = new Map<string, { at: number; fingerprint: string; condition: ConditionInput }>();
  constructor(
    private readonly client: Pick<KubeClient, "get">,
    private readonly now: () => number,
    private readonly probe: (target: ExternalTarget) => Promise<ProbeOutcome> = probeExternalOpenSearch,
  ) {}

  /** The condition, and the Secrets' version for Cortex's pod (undefined when embedded or a Secret is missing). */
  async observe(
    namespace: string,
    name: string,
    spec: RemramApplianceSpec,
  ): Promise<{ condition?: ConditionInput; secretsVersion?: string }> {
    const key = `${namespace}/${name}`;
    const target = await readExternalTarget(this.client, namespace, spec);
    if (target === undefined) {
      this.known.delete(key);
      return {};
    }
    const url = spec.opensearch.external?.url ?? "";
    if ("problem" in target)
      return { condition: externalOpenSearchCondition(url, { kind: "secret", problem: target.problem }) };
    const fingerprint = `${target.url} ${target.version}`;
    const cached = this.known.get(key);
    if (cached && cached.fingerprint === fingerprint && this.now() - cached.at < externalProbeTtlMs) {
      return { condition: cached.condition, secretsVersion: target.version };
    }
    const condition = externalOpenSearchCondition(target.url, await this.probe(target));
    this.known.set(key, { at: this.now(), fingerprint, condition });
    return { condition, secretsVersion: target.version };
  }
}
