/**
 * `make demo`: the appliance on real pods, as a user on a k3s box runs it. After `cli.ts up` has started the
 * control plane, the real node and the model registry, this installs the chart with the images built here, applies
 * an appliance, waits for Ready, has one conversation through the gateway's Service, walks the knowledge loop
 * (demo-loop.ts: remember, recall, dream, approve, archive) and prints where to look next.
 * Each step prints the command a user would type. `make infra-down` stops everything (the node's pods with it).
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import {
  gatewayServiceAccess,
  nodeNamespace,
  operatorChartValues,
  testbedAppliance,
} from "../../test/harness/src/appliance.js";
import { binPath, repoRoot, stateDir } from "../../test/harness/src/paths.js";
import type { TestbedEndpoints } from "../../test/harness/src/testbed.js";
import { knowledgeLoop } from "./demo-loop.js";

const labDir = join(stateDir, "lab");
const namespace = "home";
const operatorNamespace = "remram-system";
const chart = join(repoRoot, "charts/remram-operator");

function step(message: string, command?: string): void {
  console.log(`\n== ${message}${command ? `\n   $ ${command}` : ""}`);
}

function readEndpoints() {
  const file = join(stateDir, "testbed.json");
  if (!existsSync(file)) throw new Error("the test bed is not running: run `make demo` (it starts it) first");
  const { kubernetes, node } = JSON.parse(readFileSync(file, "utf8")) as TestbedEndpoints;
  if (!kubernetes || !node?.modelRegistry) {
    throw new Error(
      "the demo needs the real node and the model registry: `make infra-down`, then `make demo`",
    );
  }
  return { kubeconfig: kubernetes.kubeconfig, server: kubernetes.server, node, registry: node.modelRegistry };
}

async function main(): Promise<void> {
  const { kubeconfig, server, node, registry } = readEndpoints();
  mkdirSync(labDir, { recursive: true });
  const env = {
    ...process.env,
    KUBECONFIG: kubeconfig,
    PATH: `${binPath("")}:${join(repoRoot, "hack/bin")}:${process.env.PATH}`,
  };
  const sh = (command: string, args: string[], input?: string): string =>
    execFileSync(command, args, { env, input, encoding: "utf8", stdio: ["pipe", "pipe", "inherit"] });
  const show = (command: string, args: string[]): void => {
    console.log(sh(command, args).trimEnd());
  };

  step("Namespaces on the real node (the appliance's enforces restricted pod security)");
  for (const [name, restricted] of [
    [operatorNamespace, false],
    [namespace, true],
  ] as const) {
    sh("kubectl", ["apply", "-f", "-"], JSON.stringify(nodeNamespace(node, name, restricted)));
  }

  const values = join(labDir, "values.json");
  writeFileSync(values, `${JSON.stringify(operatorChartValues(node, [namespace]), null, 2)}\n`);
  step(
    "The operator, in-cluster, from the chart (images built here, already on the node)",
    `helm upgrade --install remram charts/remram-operator -n ${operatorNamespace} -f ${values} --wait`,
  );
  show(binPath("helm"), [
    "upgrade",
    "--install",
    "remram",
    chart,
    "-n",
    operatorNamespace,
    "-f",
    values,
    "--take-ownership",
    "--wait",
  ]);

  const manifest = join(labDir, "appliance.json");
  writeFileSync(manifest, `${JSON.stringify(testbedAppliance("moltbox", namespace, registry), null, 2)}\n`);
  step("An appliance, its models from the box's registry", `kubectl apply -f ${manifest}`);
  show("kubectl", ["apply", "-f", manifest]);

  const started = Date.now();
  step(
    "OpenSearch, Ollama (pulling the models), Cortex and the gateway come up as real pods",
    `kubectl -n ${namespace} wait --for=condition=Ready remramappliance/moltbox --timeout=600s`,
  );
  show("kubectl", [
    "-n",
    namespace,
    "wait",
    "--for=condition=Ready",
    "remramappliance/moltbox",
    "--timeout=600s",
  ]);
  console.log(`Ready after ${((Date.now() - started) / 1000).toFixed(0)} s`);
  show("kubectl", ["-n", namespace, "get", "pods", "-o", "wide"]);
  step("Its conditions, as the plugin shows them", `kubectl remram status moltbox -n ${namespace}`);
  show("kubectl", ["remram", "status", "moltbox", "-n", namespace]);

  const tokenFile = join(labDir, "gateway-token");
  const { url, token } = await gatewayServiceAccess((args) => sh("kubectl", args), namespace, "moltbox");
  writeFileSync(tokenFile, token, { mode: 0o600 });
  const chat = (text: string) =>
    `curl -s ${url}/v1/chat/completions -H "authorization: Bearer $(cat ${tokenFile})" -H 'content-type: application/json' -d '${JSON.stringify({ model: "openclaw/main", user: "alice", messages: [{ role: "user", content: text }] })}'`;
  step(
    "A conversation through the gateway's Service (SmolLM2 on 2 CPU cores: about a minute)",
    chat("Hello! Who are you?"),
  );
  const turn = Date.now();
  const reply = sh("bash", ["-c", chat("Hello! Who are you?")]);
  console.log(`${reply.slice(0, 600)}\n(${((Date.now() - turn) / 1000).toFixed(0)} s)`);

  await knowledgeLoop({
    namespace,
    appliance: "moltbox",
    labDir,
    server,
    gateway: { url, tokenFile, token },
    sh,
    step,
  });

  console.log(`
Where to look next:
  export KUBECONFIG=${kubeconfig} PATH=${binPath("")}:${join(repoRoot, "hack/bin")}:$PATH
  kubectl -n ${namespace} get remramappliances,dreamschedules,dimensionpolicies,artifactproposals,pods
  kubectl -n ${namespace} logs deploy/moltbox-gateway -c gateway     # the hooks plugin's events: retrieval, reflection
  kubectl -n ${namespace} logs deploy/moltbox-cortex                 # Cortex's requests
  kubectl -n ${operatorNamespace} logs deploy/remram-operator        # the reconciles
  kubectl remram status moltbox -n ${namespace}; kubectl -n ${namespace} get artifactproposals
The kwok lab (no real pods, faster): \`make lab-kwok\`. Stop everything with \`make infra-down\`.`);
}

try {
  await main();
} catch (error) {
  console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
  console.error(`Logs: ${join(stateDir, "logs")}; stop what runs with \`make infra-down\`.`);
  process.exitCode = 1;
}
