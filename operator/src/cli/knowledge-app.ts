/**
 * `kubectl remram knowledge`: the I/O. It asks remram-app's JSON API with the bearer token of the kubeconfig's
 * current user (a member's ServiceAccount token, as `user add -o kubeconfig` writes it), so the app and Cortex see
 * the person, exactly as in the browser. The app is reached at --app-url, else at the front door the appliance
 * publishes (app-address.ts), else through a port-forward to the appliance's ready remram-app pod (port-forward.ts). The token goes in the Authorization header and nowhere else:
 * no message, notice or log line carries it.
 */
import { request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest } from "node:https";
import { rootCertificates } from "node:tls";
import {
  erasureResponse,
  lifecycleStatuses,
  type PersonKnowledgeResponse,
  personKnowledgeCorrectResponse,
  personKnowledgeForgetResponse,
  personKnowledgeResponse,
} from "@remram/contract";
import { appBasePath } from "../appliance/children/app.js";
import { applianceFor, frontDoor } from "./app-address.js";
import type { Cluster } from "./cluster.js";
import { CliError } from "./errors.js";
import {
  appRequestUrl,
  credentialProblem,
  isLoopback,
  type KnowledgeCommand,
  type KubeconfigUser,
  knowledgeLimits,
  listingQuery,
} from "./knowledge.js";
import {
  appRefusal,
  formatCorrected,
  formatErased,
  formatForgotten,
  formatKnowledgeItem,
  formatKnowledgeTable,
} from "./knowledge-format.js";
import { type HttpAnswer, readyPods, requestThroughPod } from "./port-forward.js";

/** remram-app's port in its pod (appPort of the operator's Deployment, appliance/children/app.ts). */
export const appPort = 8080;
const requestTimeoutMs = 60_000;
/** Forgetting everything rewrites every store; the app waits up to 10 minutes for Cortex. */
const forgetAllTimeoutMs = 620_000;

type Method = "GET" | "POST";
interface App {
  /** Where the app is, for messages: its URL or pod. */
  where: string;
  call(method: Method, path: string, body: unknown, timeoutMs: number): Promise<HttpAnswer>;
}

const tlsCodes = /CERT|SELF_SIGNED|UNABLE_TO_VERIFY|UNABLE_TO_GET_ISSUER|ERR_TLS/;

/** One request to the app's own address. */
function callUrl(
  appUrl: string,
  token: string,
  method: Method,
  path: string,
  body: unknown,
  timeoutMs: number,
  /** A CA to trust besides the system's: the appliance's own, for its front door. */
  ca?: string,
): Promise<HttpAnswer> {
  const url = appRequestUrl(appUrl, path);
  const payload = body === undefined ? undefined : JSON.stringify(body);
  const send = url.protocol === "https:" ? httpsRequest : httpRequest;
  return new Promise<HttpAnswer>((resolve, reject) => {
    const request = send(
      url,
      {
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          ...(payload === undefined
            ? {}
            : { "content-type": "application/json", "content-length": Buffer.byteLength(payload) }),
        },
        timeout: timeoutMs,
        ...(ca === undefined ? {} : { ca: [...rootCertificates, ca] }),
      },
      (response: IncomingMessage) => {
        const chunks: Buffer[] = [];
        response.on("data", (chunk: Buffer) => chunks.push(chunk));
        response.on("end", () =>
          resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        response.on("error", reject);
      },
    );
    request.on("timeout", () =>
      request.destroy(
        Object.assign(new Error(`no answer within ${timeoutMs / 1000} s`), { code: "TIMEOUT" }),
      ),
    );
    request.on("error", (error: Error & { code?: string }) => {
      const code = error.code ?? "";
      reject(
        new CliError(
          tlsCodes.test(code)
            ? `remram-app at ${appUrl} presented a certificate this machine does not trust (${code}): NODE_EXTRA_CA_CERTS=ca.pem names a CA to trust`
            : `cannot reach remram-app at ${appUrl}: ${code === "ECONNREFUSED" ? "connection refused" : error.message}${code !== "" && code !== "ECONNREFUSED" && code !== "TIMEOUT" ? ` (${code})` : ""}`,
        ),
      );
    });
    request.end(payload);
  });
}

/** The app's ready pod: the named appliance's, or the only appliance's in the namespace. */
async function appPod(cluster: Cluster, appliance: string | undefined): Promise<string> {
  const instance = "app.kubernetes.io/instance";
  const selector = `app.kubernetes.io/name=remram-app${appliance === undefined ? "" : `,${instance}=${appliance}`}`;
  // Pods, not RemramAppliances, are listed: the forward needs that right anyway, and a member may not list those.
  const pods = await readyPods(
    cluster,
    selector,
    appliance === undefined ? "remram-app pod" : `remram-app pod for appliance ${appliance}`,
  );
  const appliances = [...new Set(pods.map((pod) => pod.labels[instance] ?? "?"))];
  if (appliances.length > 1)
    throw new CliError(
      `namespace ${cluster.namespace} has remram-app pods of several appliances (${appliances.join(", ")}): pick one with --appliance`,
    );
  return (pods[0] as { name: string }).name;
}

async function reachApp(command: KnowledgeCommand, cluster: Cluster, token: string): Promise<App> {
  const { appUrl, appliance } = command.target;
  const atAddress = (where: string, ca?: string): App => {
    const url = new URL(where);
    // Said before the token is sent, so it shows when the request fails too.
    if (url.protocol === "http:" && !isLoopback(url))
      process.stderr.write(
        `warning: ${url.host} is plain http: your credential crosses the network unencrypted (use https, or a local port-forward)\n`,
      );
    return {
      where,
      call: (method, path, body, timeoutMs) => callUrl(where, token, method, path, body, timeoutMs, ca),
    };
  };
  if (appUrl !== undefined) return atAddress(appUrl);
  const found = await applianceFor(cluster, appliance);
  const door = frontDoor(found);
  if (door !== undefined) return atAddress(door.url, door.ca);
  const pod = await appPod(cluster, found?.metadata.name);
  return {
    where: `remram-app (pod ${pod})`,
    call: (method, path, body, timeoutMs) =>
      requestThroughPod(command, cluster, pod, appPort, {
        method,
        // The app serves under its base path in the pod too.
        path: `${appBasePath.replace(/\/$/, "")}${path}`,
        headers: { authorization: `Bearer ${token}`, accept: "application/json" },
        ...(body === undefined ? {} : { body }),
        timeoutMs,
        peer: "remram-app",
      }),
  };
}

type Schema<T> = { safeParse(value: unknown): { success: true; data: T } | { success: false; error: Error } };

/** Ask the app; a refusal becomes its message, an answer is checked against the contract's schema. */
async function ask<T>(
  app: App,
  method: Method,
  path: string,
  schema: Schema<T>,
  body?: unknown,
  timeoutMs = requestTimeoutMs,
): Promise<T> {
  const answer = await app.call(method, path, body, timeoutMs);
  if (answer.status < 200 || answer.status >= 300)
    throw new CliError(appRefusal(answer.status, answer.body, app.where));
  let parsed: unknown;
  try {
    parsed = JSON.parse(answer.body);
  } catch {
    throw new CliError(`${app.where} answered ${answer.status} without JSON (is it remram-app?)`);
  }
  const checked = schema.safeParse(parsed);
  if (!checked.success)
    throw new CliError(`${app.where} sent an unexpected answer: ${checked.error.message}`);
  return checked.data;
}

/** The kubeconfig's bearer token, or the message saying it has none. */
function memberToken(cluster: Cluster): string {
  const user = cluster.kubeConfig.getCurrentUser() as KubeconfigUser | null;
  const problem = credentialProblem(user);
  if (problem !== undefined) throw new CliError(problem);
  return (user?.token ?? "").trim();
}

const json = (value: unknown) => JSON.stringify(value, null, 2);
/** The terminal's width for cutting statements; none when stdout is not a terminal. */
const terminalWidth = () => (process.stdout.isTTY ? process.stdout.columns : undefined);

async function listing(app: App, command: Extract<KnowledgeCommand, { action: "list" | "search" }>) {
  const query = command.action === "search" ? command.query : undefined;
  const answer = await ask(
    app,
    "GET",
    `/api/knowledge${listingQuery(command.filters, query)}`,
    personKnowledgeResponse,
  );
  return command.output === "json" ? json(answer) : formatKnowledgeTable(answer, terminalWidth());
}

/**
 * remram-app has no route for one object (and its search matches words, not ids), so `show` pages through all the
 * person may see, of every status, until the id turns up: a person's knowledge is small (hundreds of objects),
 * a page or a few of 200. A GET /api/knowledge/:id in the app would make this one request.
 */
async function show(app: App, command: Extract<KnowledgeCommand, { action: "show" }>) {
  let cursor: string | undefined;
  let seen = 0;
  for (;;) {
    const filters = {
      ...(command.user !== undefined ? { user: command.user } : {}),
      status: [...lifecycleStatuses],
      limit: knowledgeLimits.pageSize,
      ...(cursor !== undefined ? { cursor } : {}),
    };
    const page: PersonKnowledgeResponse = await ask(
      app,
      "GET",
      `/api/knowledge${listingQuery(filters)}`,
      personKnowledgeResponse,
    );
    const found = page.items.find((item) => item.object.id === command.id);
    if (found !== undefined) return command.output === "json" ? json(found) : formatKnowledgeItem(found);
    seen += page.items.length;
    if (page.nextCursor === null || page.items.length === 0)
      throw new CliError(
        `no knowledge object ${command.id} among the ${seen} ${command.user === undefined ? "you" : command.user} may see (kubectl remram knowledge list shows the ids)`,
      );
    cursor = page.nextCursor;
  }
}

async function act(app: App, command: KnowledgeCommand): Promise<string> {
  switch (command.action) {
    case "list":
    case "search":
      return listing(app, command);
    case "show":
      return show(app, command);
    case "correct": {
      const { statement, reason } = command;
      const answer = await ask(
        app,
        "POST",
        `/api/knowledge/${encodeURIComponent(command.id)}/correct`,
        personKnowledgeCorrectResponse,
        { statement, ...(reason !== undefined ? { reason } : {}) },
      );
      return command.output === "json" ? json(answer) : formatCorrected(answer);
    }
    case "forget": {
      const { ids, user, reason } = command;
      const answer = await ask(app, "POST", "/api/knowledge/forget", personKnowledgeForgetResponse, {
        ids,
        ...(user !== undefined ? { user } : {}),
        ...(reason !== undefined ? { reason } : {}),
      });
      return command.output === "json" ? json(answer) : formatForgotten(answer);
    }
    case "forget-all": {
      const { confirm, reason } = command;
      const answer = await ask(
        app,
        "POST",
        "/api/knowledge/forget-all",
        erasureResponse,
        { confirm, ...(reason !== undefined ? { reason } : {}) },
        forgetAllTimeoutMs,
      );
      return command.output === "json" ? json(answer) : formatErased(confirm, answer);
    }
  }
}

/** Run a `knowledge` command; what it prints on stdout. */
export async function runKnowledge(command: KnowledgeCommand, cluster: Cluster): Promise<string> {
  // The credential first: without a member's token the app would refuse anything.
  const token = memberToken(cluster);
  return act(await reachApp(command, cluster, token), command);
}
