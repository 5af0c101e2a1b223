/**
 * `make lab-kwok`: the appliance lab without real pods, faster than `make demo`. After `cli.ts up` has started OpenSearch, Ollama and the
 * Kubernetes control plane, this starts the real Cortex and the real operator as background processes, shows
 * per-user memory through Cortex's API and reconciles an appliance on kwok nodes. Everything it starts is recorded
 * under .remram/pids, so `make infra-down` stops it by PID.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { type CallerName, callerNames } from "@remram/contract";
import { binPath, repoRoot, stateDir } from "../../test/harness/src/paths.js";
import { freePort } from "../../test/harness/src/ports.js";
import type { ManagedProcess } from "../../test/harness/src/process.js";
import { spawnService } from "../../test/harness/src/process.js";
import { createKwokNode } from "../../test/harness/src/services/kwok-nodes.js";
import type { TestbedEndpoints } from "../../test/harness/src/testbed.js";
import { httpReady, waitFor } from "../../test/harness/src/wait.js";

const labDir = join(stateDir, "lab");
const namespace = "home";

/** Wait for a process's readiness URL; give up at once with its log tail if it exits. */
async function untilReady(
  url: string,
  what: string,
  service: ManagedProcess,
  timeoutMs: number,
): Promise<void> {
  await waitFor(() => httpReady(url), {
    what,
    timeoutMs,
    abortIf: () => {
      const ended = service.exitReason();
      return ended === undefined ? undefined : `${ended}\n${service.logTail(20)}`;
    },
  });
}

function step(message: string): void {
  console.log(`\n== ${message}`);
}

type LabEndpoints = Required<Pick<TestbedEndpoints, "opensearch" | "ollama" | "kubernetes">>;

function readEndpoints(): LabEndpoints {
  const file = join(stateDir, "testbed.json");
  if (!existsSync(file))
    throw new Error("the test bed is not running: run `make lab-kwok` (it starts it) first");
  const endpoints = JSON.parse(readFileSync(file, "utf8")) as TestbedEndpoints;
  const { opensearch, ollama, kubernetes } = endpoints;
  if (!opensearch || !ollama || !kubernetes) {
    throw new Error(
      "the lab needs OpenSearch, Ollama and Kubernetes; start the test bed with REMRAM_TESTBED unset",
    );
  }
  return { opensearch, ollama, kubernetes };
}

interface LabCortex {
  url: string;
  /** The gateway's credential: the lab ingests and retrieves as the gateway would. */
  token: string;
  /** One credential per caller, in files named like the caller (Cortex's CORTEX_CREDENTIALS_DIR). */
  credentials: Record<CallerName, string>;
}

async function startCortex(endpoints: LabEndpoints): Promise<LabCortex> {
  const credentialsDir = join(labDir, "cortex-credentials");
  mkdirSync(credentialsDir, { recursive: true, mode: 0o700 });
  const credentials = Object.fromEntries(
    callerNames.map((caller) => [caller, randomBytes(24).toString("hex")]),
  ) as Record<CallerName, string>;
  for (const caller of callerNames) {
    writeFileSync(join(credentialsDir, caller), `${credentials[caller]}\n`, { mode: 0o600 });
  }
  const workspaceDir = join(labDir, "workspace");
  mkdirSync(workspaceDir, { recursive: true });
  if (!existsSync(join(workspaceDir, ".git")))
    execFileSync("git", ["init", "-q", "-b", "main", workspaceDir]);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const cortex = spawnService({
    name: `cortex-${port}`,
    command: process.execPath,
    args: ["--import", "tsx", join(repoRoot, "cortex/src/main.ts")],
    cwd: repoRoot,
    detach: true,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      CORTEX_HOST: "127.0.0.1",
      CORTEX_PORT: String(port),
      CORTEX_CREDENTIALS_DIR: credentialsDir,
      CORTEX_OPENSEARCH_URL: endpoints.opensearch.url,
      CORTEX_OLLAMA_URL: endpoints.ollama.url,
      CORTEX_EMBED_MODEL: endpoints.ollama.embedModel,
      CORTEX_INDEX_PREFIX: "lab",
      CORTEX_WORKSPACE_DIR: workspaceDir,
      // CPU Ollama on a small box: give the first query embedding time to load the model.
      CORTEX_EMBED_TIMEOUT_MS: "10000",
    },
  });
  await untilReady(`${url}/readyz`, "Cortex", cortex, 90_000);
  return { url, token: credentials.gateway, credentials };
}

async function cortexCall<T>(
  cortex: { url: string; token: string },
  path: string,
  body: unknown,
): Promise<T> {
  const response = await fetch(`${cortex.url}${path}`, {
    method: "POST",
    headers: { authorization: `Bearer ${cortex.token}`, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`Cortex ${path} answered ${response.status}: ${text}`);
  return JSON.parse(text) as T;
}

async function showMemory(cortex: { url: string; token: string }): Promise<void> {
  const household = { householdId: namespace };
  await cortexCall(cortex, "/ingest", {
    events: [
      {
        kind: "knowledge",
        provenanceKey: "lab:router-firmware",
        scope: "household",
        owner: household,
        type: "constraint",
        source: "user",
        confidence: 0.9,
        statement: "The router firmware must stay on version 7.1 because the ISP modem breaks on 7.2.",
      },
      {
        kind: "knowledge",
        provenanceKey: "lab:ana-coffee",
        scope: "user",
        owner: { userId: "ana", ...household },
        privacy: "private",
        type: "preference",
        source: "user",
        confidence: 0.8,
        statement: "Ana takes her coffee black and never wants reminders before 8 am.",
      },
      {
        kind: "knowledge",
        provenanceKey: "lab:ben-backups",
        scope: "user",
        owner: { userId: "ben", ...household },
        privacy: "private",
        type: "decision",
        source: "user",
        confidence: 0.8,
        statement: "Ben decided the NAS backups run on Sundays at 2 am.",
      },
    ],
  });
  for (const userId of ["ana", "ben"]) {
    const answer = await cortexCall<{ bundle: { text: string }; facts: unknown[] }>(cortex, "/retrieve", {
      principal: { userId, householdId: namespace, agentId: "main" },
      requestText: "what should I keep in mind about the router, my coffee and the backups?",
      tokenBudget: 300,
    });
    console.log(`\n-- the bundle the hooks would inject for ${userId} (${answer.facts.length} facts):`);
    console.log(answer.bundle.text.trim());
  }
}

function kubectl(kubeconfig: string, args: string[], input?: string): string {
  return execFileSync(binPath("kubectl"), ["--kubeconfig", kubeconfig, ...args], {
    encoding: "utf8",
    ...(input === undefined ? {} : { input }),
  });
}

/**
 * kwok pods are fake, so nothing provisions for them: pre-create the volumes a k3s node's local-path provisioner
 * would make, in the default StorageClass when there is one (the real node's `local-path`), so the claims bind.
 */
function volumesYaml(count: number, storageClass: string): string {
  return Array.from(
    { length: count },
    (_, index) => `apiVersion: v1
kind: PersistentVolume
metadata:
  name: lab-volume-${index}
spec:
  capacity: { storage: 200Gi }
  accessModes: [ReadWriteOnce]
  persistentVolumeReclaimPolicy: Retain
${storageClass ? `  storageClassName: ${storageClass}\n` : ""}  hostPath: { path: /var/lib/remram-lab/volume-${index} }
`,
  ).join("---\n");
}

function applianceYaml(ollama: LabEndpoints["ollama"]): string {
  return `apiVersion: remram.io/v1alpha1
kind: RemramAppliance
metadata: { name: moltbox, namespace: ${namespace} }
spec:
  hardwareProfile: auto
  ollama:
    gpu: auto
    models: { routing: ${ollama.chatModel}, reflection: ${ollama.chatModel}, embedding: ${ollama.embedModel} }
---
apiVersion: remram.io/v1alpha1
kind: DreamSchedule
metadata: { name: nightly, namespace: ${namespace} }
spec:
  applianceRef: { name: moltbox }
  schedule: "30 3 * * *"
  timeZone: Europe/Berlin
`;
}

async function runOperator(endpoints: LabEndpoints, cortex: LabCortex) {
  const { kubeconfig } = endpoints.kubernetes;
  kubectl(kubeconfig, ["apply", "--server-side", "--force-conflicts", "-f", join(repoRoot, "crds")]);
  kubectl(kubeconfig, ["wait", "--for=condition=Established", "crd", "--all", "--timeout=60s"]);
  kubectl(
    kubeconfig,
    ["apply", "-f", "-"],
    `apiVersion: v1\nkind: Namespace\nmetadata: { name: ${namespace} }\n`,
  );
  const defaultClass = kubectl(kubeconfig, [
    "get",
    "storageclass",
    "-o",
    'jsonpath={.items[?(@.metadata.annotations.storageclass\\.kubernetes\\.io/is-default-class=="true")].metadata.name}',
  ]).trim();
  kubectl(kubeconfig, ["apply", "-f", "-"], volumesYaml(4, defaultClass));
  // Cortex runs as a process here, so its credentials come first: Secrets labelled as the operator's own, whose
  // values the operator keeps (it generates only missing ones).
  for (const caller of callerNames) {
    kubectl(
      kubeconfig,
      ["-n", namespace, "apply", "-f", "-"],
      `apiVersion: v1\nkind: Secret\nmetadata: { name: moltbox-cortex-${caller}, labels: { app.kubernetes.io/managed-by: remram-operator } }\nstringData: { token: ${cortex.credentials[caller]} }\n`,
    );
  }
  const nodes = kubectl(kubeconfig, ["get", "nodes", "-o", "name"]);
  if (!nodes.includes("node/moltbox-node")) {
    await createKwokNode(endpoints.kubernetes, { name: "moltbox-node", cpu: "16", memory: "64Gi" });
  }
  const probePort = await freePort();
  const operator = spawnService({
    name: `operator-${probePort}`,
    command: process.execPath,
    args: ["--import", "tsx", join(repoRoot, "operator/src/main.ts")],
    cwd: repoRoot,
    detach: true,
    env: {
      PATH: process.env.PATH,
      HOME: process.env.HOME,
      KUBECONFIG: kubeconfig,
      POD_NAME: "remram-operator-lab",
      POD_NAMESPACE: namespace,
      REMRAM_WATCH_NAMESPACES: namespace,
      REMRAM_PROBE_PORT: String(probePort),
      REMRAM_OUT_OF_CLUSTER_CORTEX_URL: cortex.url,
      REMRAM_OUT_OF_CLUSTER_OLLAMA_URL: endpoints.ollama.url,
    },
  });
  await untilReady(`http://127.0.0.1:${probePort}/readyz`, "operator", operator, 60_000);
  kubectl(kubeconfig, ["apply", "-f", "-"], applianceYaml(endpoints.ollama));
  await waitFor(
    async () => {
      const ready = kubectl(kubeconfig, [
        "-n",
        namespace,
        "get",
        "remramappliance/moltbox",
        "-o",
        'jsonpath={.status.conditions[?(@.type=="Ready")].status}',
      ]);
      return ready === "True" ? true : undefined;
    },
    { what: "RemramAppliance moltbox Ready", timeoutMs: 180_000, intervalMs: 1_000 },
  );
  console.log(kubectl(kubeconfig, ["-n", namespace, "get", "remramappliances,dreamschedules"]));
  console.log(
    kubectl(kubeconfig, [
      "-n",
      namespace,
      "get",
      "remramappliance/moltbox",
      "-o",
      'jsonpath={range .status.conditions[*]}{.type}{"="}{.status}{" ("}{.reason}{")\\n"}{end}',
    ]),
  );
  return { probePort };
}

async function main(): Promise<void> {
  const endpoints = readEndpoints();
  mkdirSync(labDir, { recursive: true });

  step("Cortex on the test bed's OpenSearch and Ollama");
  const cortex = await startCortex(endpoints);
  console.log(
    `Cortex ${cortex.url} (one credential per caller in ${join(labDir, "cortex-credentials")}; OpenAPI at /docs/json)`,
  );

  step("Memory is per user: the same question, two people, two bundles");
  await showMemory(cortex);

  step("The operator reconciles an appliance on a kwok node (CPU only: the GPU fallback is explained)");
  const { probePort } = await runOperator(endpoints, cortex);

  const kubeconfig = endpoints.kubernetes.kubeconfig;
  console.log(`
Try it:
  export KUBECONFIG=${kubeconfig} PATH=${binPath("")}:${join(repoRoot, "hack/bin")}:$PATH
  kubectl -n ${namespace} get remramappliances,dreamschedules,dimensionpolicies,artifactproposals
  kubectl remram status moltbox -n ${namespace}
  kubectl remram dream now nightly -n ${namespace}   # a dream cycle on the lab Cortex, counts in the status
  curl -s ${cortex.url}/metrics | head
  curl -s http://127.0.0.1:${probePort}/metrics | grep controller_runtime_reconcile_total
Stop everything with \`make infra-down\`.`);
}

try {
  await main();
} catch (error) {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`Logs: ${join(stateDir, "logs")}; stop what runs with \`make infra-down\`.`);
  process.exitCode = 1;
}
