/**
 * The knowledge loop of `make demo`, after the appliance is Ready: what a household sees, each step with the command
 * a person on the box would type. Alice tells the assistant something and asks it to remember it (stored at once,
 * its page proposed); a later run gets it back while Bob gets none of it; a dream cycle runs; Bob, as the
 * household's approver, approves Alice's page with `kubectl remram approve` and the commit appears in Cortex's
 * repository; Alice's session is reset, its transcript archived, and `memory_search` finds it.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";

export interface LoopContext {
  namespace: string;
  appliance: string;
  labDir: string;
  server: string;
  /** The gateway Service's URL and the bearer file a client on the box presents. */
  gateway: { url: string; tokenFile: string; token: string };
  sh: (command: string, args: string[], input?: string) => string;
  step: (message: string, command?: string) => void;
}

const said = "Please remember that my sister Ingrid lives in Bergen and visits every June.";
const sessionOf = (user: string, agent = "main") => `agent:${agent}:openai-user:${user}`;

function wait(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function until<T>(what: string, timeoutMs: number, probe: () => T | undefined): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await wait(2_000);
  }
}

export async function knowledgeLoop(ctx: LoopContext): Promise<void> {
  const { namespace, appliance, sh, step } = ctx;
  const kubectl = (...args: string[]) => sh("kubectl", ["-n", namespace, ...args]);
  const chatCommand = (user: string, agent: string, text: string) =>
    `curl -s ${ctx.gateway.url}/v1/chat/completions -H "authorization: Bearer $(cat ${ctx.gateway.tokenFile})" -H 'content-type: application/json' -d '${JSON.stringify({ model: `openclaw/${agent}`, user, messages: [{ role: "user", content: text }] })}'`;
  const chat = (user: string, agent: string, text: string): string => {
    const reply = JSON.parse(sh("bash", ["-c", chatCommand(user, agent, text)])) as {
      choices?: { message?: { content?: string } }[];
    };
    return reply.choices?.[0]?.message?.content?.trim() ?? "(no reply)";
  };
  const hooksLog = (event: string) =>
    kubectl("logs", `deploy/${appliance}-gateway`, "-c", "gateway", "--since=10m")
      .split("\n")
      .filter((line) => line.includes(`"event":"${event}"`));

  step(
    "The household's DreamSchedule (nightly dream; it also mirrors proposals for approval)",
    "kubectl apply -f - <<EOF … DreamSchedule nightly … EOF",
  );
  sh(
    "kubectl",
    ["apply", "-f", "-"],
    JSON.stringify({
      apiVersion: "remram.io/v1alpha1",
      kind: "DreamSchedule",
      metadata: { name: "nightly", namespace },
      spec: { applianceRef: { name: appliance }, schedule: "0 3 * * *", timeZone: "Europe/Oslo" },
    }),
  );

  step(
    "Alice asks the assistant to remember something (an explicit save)",
    chatCommand("alice", "reader", said),
  );
  console.log(`reply: ${chat("alice", "reader", said)}`);
  for (const line of hooksLog("explicit_save").slice(-1)) console.log(`hooks plugin: ${line.slice(0, 300)}`);
  /** The page proposal waiting with Alice's fact (a dream cycle may supersede it with one of its own). */
  const ingridsPage = () =>
    until("the page proposal with Alice's fact", 120_000, () => {
      const items = (
        JSON.parse(kubectl("get", "artifactproposals", "-o", "json")) as {
          items: { metadata: { name: string }; spec: { diff: string }; status?: { phase?: string } }[];
        }
      ).items;
      return items.find((item) => item.spec.diff.includes("Ingrid") && item.status?.phase === "Pending");
    });
  const proposal = await ingridsPage();
  step("Its page waits for approval as an ArtifactProposal", `kubectl get artifactproposals -n ${namespace}`);
  console.log(kubectl("get", "artifactproposals"));
  console.log(sh("kubectl", ["remram", "diff", proposal.metadata.name, "-n", namespace]));

  const question = "Where does my sister Ingrid live?";
  step(
    "In a later run Alice asks; the hooks plugin injects what Cortex holds for her (SmolLM2 on the CPU: a minute)",
    chatCommand("alice", "main", question),
  );
  console.log(`reply: ${chat("alice", "main", question).slice(0, 400)}`);
  // SmolLM2-135M may not use what it was given; what the plugin gave it shows in its counters.
  const metricsScript =
    'fetch("http://127.0.0.1:9464/metrics").then((r) => r.text()).then((t) => console.log(t.split("\\n").filter((l) => l.startsWith("remram_hooks_injections_total")).join(" ")))';
  const injections = kubectl(
    "exec",
    `deploy/${appliance}-gateway`,
    "-c",
    "gateway",
    "--",
    "node",
    "-e",
    metricsScript,
  );
  console.log(
    `hooks plugin: ${injections.trim()} (Alice's run got Cortex's bundle: "… Ingrid lives in Bergen …")`,
  );
  step("Bob asks the same; Alice's private memory is not his", chatCommand("bob", "reader", question));
  console.log(`reply: ${chat("bob", "reader", question)}`);
  // Cortex had nothing of Bob's to give; the plugin says why it injected nothing.
  const bobs = hooksLog("injection_skipped").filter((line) => line.includes("openai-user:bob"));
  for (const line of bobs.slice(-1)) console.log(`hooks plugin: ${line.slice(0, 300)}`);

  step("A dream cycle now, instead of at 03:00", `kubectl remram dream now nightly -n ${namespace}`);
  const requestedAt = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString();
  console.log(sh("kubectl", ["remram", "dream", "now", "nightly", "-n", namespace]));
  await until("the dream cycle", 180_000, () => {
    const run = (
      JSON.parse(kubectl("get", "dreamschedule", "nightly", "-o", "json")) as {
        status?: { lastRun?: { outcome?: string; startedAt?: string } };
      }
    ).status?.lastRun;
    const finished = run?.outcome === "Succeeded" || run?.outcome === "Failed";
    return finished && (run?.startedAt ?? "") >= requestedAt.replace(".000Z", "Z") ? run : undefined;
  });
  console.log(
    sh("kubectl", ["remram", "status", appliance, "-n", namespace])
      .split("\n")
      .filter((line) => line.includes("dream "))
      .join("\n"),
  );
  const page = await ingridsPage();

  const approverConfig = approverKubeconfig(ctx, kubectl);
  step(
    "Bob, the household's approver, approves Alice's page as himself",
    `kubectl remram approve ${page.metadata.name} -n ${namespace} --kubeconfig ${approverConfig}`,
  );
  console.log(
    sh("kubectl", ["remram", "approve", page.metadata.name, "-n", namespace, "--kubeconfig", approverConfig]),
  );
  await until("the promotion", 120_000, () => {
    const phase = kubectl("get", "artifactproposal", page.metadata.name, "-o", "jsonpath={.status.phase}");
    return phase === "Promoted" || phase === "Failed" ? phase : undefined;
  });
  step(
    "The commit in Cortex's repository",
    `kubectl -n ${namespace} exec deploy/${appliance}-cortex -c cortex -- git -C /data/cortex/repo log -1 --stat`,
  );
  console.log(
    kubectl(
      "exec",
      `deploy/${appliance}-cortex`,
      "-c",
      "cortex",
      "--",
      "git",
      "-c",
      "safe.directory=/data/cortex/repo",
      "-C",
      "/data/cortex/repo",
      "log",
      "-1",
      "--stat",
    ),
  );

  step(
    "Alice's session ends (a reset); its transcript goes to the archive",
    `kubectl -n ${namespace} exec deploy/${appliance}-gateway -c gateway -- openclaw gateway call sessions.reset --params '{"key":"${sessionOf("alice", "reader")}"}'`,
  );
  kubectl(
    "exec",
    `deploy/${appliance}-gateway`,
    "-c",
    "gateway",
    "--",
    "openclaw",
    "gateway",
    "call",
    "sessions.reset",
    "--params",
    JSON.stringify({ key: sessionOf("alice", "reader") }),
  );
  const searchCommand = `curl -s ${ctx.gateway.url}/tools/invoke -H "authorization: Bearer $(cat ${ctx.gateway.tokenFile})" -H 'content-type: application/json' -d '${JSON.stringify({ tool: "memory_search", args: { query: "sister Ingrid Bergen" }, sessionKey: sessionOf("alice", "reader") })}'`;
  step("memory_search, the agent's memory tool, finds the archived conversation", searchCommand);
  const found = await until("the archived transcript", 120_000, () => {
    const text = sh("bash", ["-c", searchCommand]);
    return /hash [a-f0-9]{64}/.test(text) ? text : undefined;
  });
  console.log(found.slice(0, 800));
}

/** A ServiceAccount bound to the chart's remram-approver role, as a household's approver would have, and its kubeconfig. */
function approverKubeconfig(ctx: LoopContext, kubectl: (...args: string[]) => string): string {
  ctx.sh("bash", [
    "-c",
    `kubectl -n ${ctx.namespace} create serviceaccount bob --dry-run=client -o yaml | kubectl apply -f - && kubectl -n ${ctx.namespace} create rolebinding bob-approver --clusterrole=remram-approver --serviceaccount=${ctx.namespace}:bob --dry-run=client -o yaml | kubectl apply -f -`,
  ]);
  const token = kubectl("create", "token", "bob", "--duration=1h").trim();
  const file = join(ctx.labDir, "bob.kubeconfig");
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "box", cluster: { server: ctx.server, "insecure-skip-tls-verify": true } }],
      users: [{ name: "bob", user: { token } }],
      contexts: [{ name: "box", context: { cluster: "box", user: "bob", namespace: ctx.namespace } }],
      "current-context": "box",
    }),
    { mode: 0o600 },
  );
  return file;
}
