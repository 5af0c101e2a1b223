// The one appliance the real-node suite shares: the chart installed with the images built here, an appliance
// applied in a namespace placed on the real node, and the ways a user reaches it (kubectl, the gateway's Service,
// Cortex's API from inside its pod, kubectl-remram as another user).
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { promisify } from "node:util";
import type { CallerName } from "@remram/contract";
import {
  gatewayServiceAccess,
  nodeNamespace,
  operatorChartValues,
  testbedAppliance,
} from "../../test/harness/src/appliance.js";
import { testbedEndpoints } from "../../test/harness/src/inject.js";
import { binPath, repoRoot, runDir } from "../../test/harness/src/paths.js";
import { kubectl as runKubectl } from "../../test/harness/src/services/kubectl.js";

const run = promisify(execFile);
export const kubernetes = testbedEndpoints("kubernetes");
export const node = testbedEndpoints("node");
export const images = node.images.app;
const registry = node.modelRegistry;
if (registry === undefined)
  throw new Error("the real-node appliance needs the registry service beside the node");
export const modelRegistry = registry;

const suffix = randomBytes(3).toString("hex");
export const chart = join(repoRoot, "charts/remram-operator");
export const valuesFile = join(runDir, `appliance-values-${suffix}.json`);
export const operatorNamespace = `remram-system-${suffix}`;
export const namespace = `home-${suffix}`;
export const release = `remram-${suffix}`;

export const kubectl = (args: readonly string[], input?: string, timeoutMs?: number): Promise<string> =>
  runKubectl(kubernetes.kubeconfig, args, input, timeoutMs);
/** `kubectl patch --type=merge` of the appliance's spec. */
export const patchApplianceSpec = (spec: unknown): Promise<string> =>
  kubectl([
    "-n",
    namespace,
    "patch",
    "remramappliance",
    "moltbox",
    "--type=merge",
    "-p",
    JSON.stringify({ spec }),
  ]);
export const helm = (...args: string[]) =>
  run(binPath("helm"), [...args, `--kubeconfig=${kubernetes.kubeconfig}`, "-n", operatorNamespace], {
    maxBuffer: 16 * 1024 * 1024,
  });
export const imageParts = (image: string) => ({
  repository: image.slice(0, image.lastIndexOf(":")),
  tag: image.slice(image.lastIndexOf(":") + 1),
});

/** A claim of the household's in the suite's namespace, as a person makes one for a backup disk. */
export const applyClaim = (name: string, storage: string): Promise<string> =>
  kubectl(
    ["-n", namespace, "apply", "-f", "-"],
    JSON.stringify({
      apiVersion: "v1",
      kind: "PersistentVolumeClaim",
      metadata: { name, namespace },
      spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage } } },
    }),
  );

export const appliance = testbedAppliance("moltbox", namespace, modelRegistry);
/** The appliance's DreamSchedule, as manifests/appliance-example.yaml has one: it also mirrors explicit saves' pages. */
export const nightlySchedule = {
  apiVersion: "remram.io/v1alpha1",
  kind: "DreamSchedule",
  metadata: { name: "nightly", namespace },
  spec: { applianceRef: { name: "moltbox" }, schedule: "0 3 * * *", timeZone: "Europe/Oslo" },
};

/**
 * `helm install` of `chartDir` with `values` (this tree's chart and the local images by default), then
 * `kubectl apply` of the appliance; resolves to when it was applied.
 */
export async function installApplianceAndOperator(
  chartDir = chart,
  values: object = operatorChartValues(node, [namespace]),
  file = valuesFile,
): Promise<number> {
  for (const [name, restricted] of [
    [operatorNamespace, false],
    [namespace, true],
  ] as const) {
    await kubectl(["apply", "-f", "-"], JSON.stringify(nodeNamespace(node, name, restricted)));
  }
  writeFileSync(file, JSON.stringify(values));
  // Other suites applied the CRDs without Helm; --take-ownership adopts them, as an upgrade from a hand install would.
  await helm("install", release, chartDir, "--take-ownership", "-f", file, "--wait");
  await kubectl(["apply", "-f", "-"], JSON.stringify(appliance));
  return Date.now();
}

export interface Condition {
  type: string;
  status: string;
  reason: string;
  message: string;
}

export async function conditions(): Promise<Condition[]> {
  const json = await kubectl(["-n", namespace, "get", "remramappliance", "moltbox", "-o", "json"]);
  return (JSON.parse(json) as { status?: { conditions?: Condition[] } }).status?.conditions ?? [];
}

/** Ready, and reconciled at the appliance's current generation. */
export async function applianceReadyAndCurrent(): Promise<boolean> {
  const json = await kubectl(["-n", namespace, "get", "remramappliance", "moltbox", "-o", "json"]);
  const appliance = JSON.parse(json) as {
    metadata: { generation: number };
    status?: { observedGeneration?: number; conditions?: { type: string; status: string }[] };
  };
  return (
    appliance.status?.observedGeneration === appliance.metadata.generation &&
    (appliance.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false)
  );
}

/** A jsonpath over the operator's pods. */
export const operatorPods = (jsonpath: string): Promise<string> =>
  kubectl([
    "-n",
    operatorNamespace,
    "get",
    "pods",
    "-l",
    "app.kubernetes.io/name=remram-operator",
    "-o",
    `jsonpath=${jsonpath}`,
  ]);

/** The pod holding the operator's leader-election Lease ("" while none does). */
export const leaseHolder = (): Promise<string> =>
  kubectl([
    "-n",
    operatorNamespace,
    "get",
    "lease",
    "remram-operator",
    "-o",
    "jsonpath={.spec.holderIdentity}",
  ]);

/**
 * "Kind/name" → uid of the appliance namespace's objects of `kinds` (kubectl's comma list): a changed uid means a
 * restarted pod, a lost volume or a child made again.
 */
export async function uids(kinds: string): Promise<Record<string, string>> {
  const json = await kubectl(["-n", namespace, "get", kinds, "-o", "json"]);
  const items = (JSON.parse(json) as { items: { kind: string; metadata: { name: string; uid: string } }[] })
    .items;
  return Object.fromEntries(items.map((item) => [`${item.kind}/${item.metadata.name}`, item.metadata.uid]));
}

/** Run a script with the component's own Node inside its pod (Cortex and the gateway images carry one). */
export function nodeInPod(component: "cortex" | "gateway", script: string, ...args: string[]) {
  return kubectl(
    [
      "-n",
      namespace,
      "exec",
      `deployment/moltbox-${component}`,
      "-c",
      component,
      "--",
      "node",
      "-e",
      script,
      ...args,
    ],
    undefined,
    60_000,
  );
}

/**
 * Cortex's API as a client inside its pod calls it, with a caller's credential from the Secrets the pod mounts
 * (the gateway's by default: these tests stand in for the gateway). Cortex's NetworkPolicy admits only the gateway
 * and the operator, so the test goes in rather than across.
 */
export async function cortexApi(
  method: "GET" | "POST",
  path: string,
  body?: unknown,
  caller: CallerName = "gateway",
): Promise<unknown> {
  const script = `
    const [method, path, body, caller] = process.argv.slice(1);
    const token = require("node:fs").readFileSync("/var/run/secrets/remram/cortex/" + caller, "utf8").trim();
    fetch("http://127.0.0.1:8080" + path, {
      method,
      // A JSON content type with no body is a 400 in Fastify, so it goes only with a body.
      headers: { authorization: "Bearer " + token, ...(body ? { "content-type": "application/json" } : {}) },
      ...(body ? { body } : {}),
    }).then(async (response) => {
      const text = await response.text();
      if (!response.ok) { console.error(response.status + " " + text); process.exit(1); }
      console.log(text);
    });`;
  const out = await nodeInPod(
    "cortex",
    script,
    method,
    path,
    body === undefined ? "" : JSON.stringify(body),
    caller,
  );
  return JSON.parse(out) as unknown;
}

/** The hooks plugin's counters, read on the gateway pod's metrics port from inside the pod. */
export async function hooksMetrics(): Promise<string> {
  return nodeInPod(
    "gateway",
    `fetch("http://127.0.0.1:9464/metrics").then((r) => r.text()).then((t) => console.log(t))`,
  );
}

/**
 * What the plugin reports about its retrievals, injections, captures and reflections: its counters and the
 * gateway's log lines for them, for the message of a failed check.
 */
export async function hooksDiagnostics(): Promise<string> {
  const counters = (await hooksMetrics().catch(String))
    .split("\n")
    .filter((line) => /^remram_hooks_(inject|retrieve|captur|ingest|reflect|escalation|queue)/.test(line));
  const log = await kubectl(["-n", namespace, "logs", "deployment/moltbox-gateway", "-c", "gateway"]).catch(
    String,
  );
  const events = log
    .split("\n")
    .filter((line) =>
      /injection_skipped|retrieve_failed|reflect|capture|ingest|escalation_decision/.test(line),
    );
  // What the models were asked and answered (the reflection's run included): the newest session transcripts' tails.
  const sessions = await kubectl([
    "-n",
    namespace,
    "exec",
    "deployment/moltbox-gateway",
    "-c",
    "gateway",
    "--",
    "sh",
    "-c",
    'for f in $(ls -t /home/node/.openclaw/agents/*/sessions/*.jsonl | head -n 4); do echo "== $f"; tail -c 2000 "$f"; echo; done',
  ]).catch(String);
  return `plugin counters:\n${counters.join("\n")}\ngateway log:\n${events.slice(-30).join("\n")}\nsessions:\n${sessions}`;
}

/** The gateway's Service address and token, as a channel or client on the box would use them. */
export const gatewayAccess = () => gatewayServiceAccess(kubectl, namespace, "moltbox");

/** Run kubectl with `args` (a plugin such as `remram` included) under another kubeconfig, as that user. */
export function kubectlAs(kubeconfig: string, args: readonly string[], extraPath: string) {
  return run(binPath("kubectl"), [...args, `--kubeconfig=${kubeconfig}`], {
    env: { ...process.env, PATH: `${extraPath}:${process.env.PATH ?? ""}` },
    maxBuffer: 4 * 1024 * 1024,
  });
}

/** `helm upgrade` of the release to another tag of the operator image, with the values it was installed with. */
export const upgradeOperator = (tag: string, ...flags: string[]) =>
  helm("upgrade", release, chart, "-f", valuesFile, "--set", `image.tag=${tag}`, "--wait", ...flags);

/** Numbers the suite measures (Ready, first reply, RSS, recoveries), written to the run folder as JSON. */
export const measured: Record<string, unknown> = {};

/** Into the run folder, or where `make bench` asks (REMRAM_APPLIANCE_MEASURED, bench/appliance.bench.ts). */
export function writeMeasured(): string {
  const file = process.env.REMRAM_APPLIANCE_MEASURED ?? join(runDir, "results", "appliance-real-node.json");
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify(measured, null, 2)}\n`);
  return file;
}
