// The knowledge loop's governed end on real pods: a DreamSchedule run in the Cortex pod proposes an artifact, the
// in-cluster operator mirrors it as an ArtifactProposal, another user approves it with `kubectl remram approve`
// (the plugin's npm bundle built here, on PATH, under that user's own kubeconfig) and Cortex commits it to the workspace
// repository on its volume. An agent then reads the promoted artifact with its read tool (through the read-only
// mount of the artifacts in its workspace), and the hooks plugin captures the tool's output into Cortex.
import { chmodSync, existsSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { metricValue } from "../../hooks/src/testing/gateway-fixture.js";
import { buildStamp, bundle } from "../../kubectl-remram/src/bundle.js";
import { runDir } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import { cortexRepoDir } from "../src/appliance/children/cortex.js";
import { gatewayWorkspaceDir } from "../src/appliance/openclaw-config.js";
import {
  cortexApi,
  hooksDiagnostics,
  hooksMetrics,
  kubectl,
  kubectlAs,
  kubernetes,
  namespace,
  nightlySchedule,
  nodeInPod,
} from "./real-appliance.js";
import { recall, say, turnTimeoutMs } from "./real-appliance-conversation.js";

export const approver = "approver-bob";
const approverUser = `system:serviceaccount:${namespace}:${approver}`;
const pluginDir = join(runDir, `kubectl-plugins-${namespace}`);
let promotedCommit: string | undefined;
let promotedPath: string | undefined;

/** The log of Cortex's repository in its pod: hash, then subject and body, per commit. */
export function workspaceLog(): Promise<string> {
  return kubectl(
    [
      "-n",
      namespace,
      "exec",
      "deployment/moltbox-cortex",
      "-c",
      "cortex",
      "--",
      "git",
      // kubelet created the repository's folder as root, not the pod's uid: git wants it named as safe.
      "-c",
      `safe.directory=${cortexRepoDir}`,
      "-C",
      cortexRepoDir,
      "log",
      "--format=%H%n%B",
    ],
    undefined,
    60_000,
  );
}

/** The commit the approval produced, for later suites to find again. */
export function approvedCommit(): string {
  if (promotedCommit === undefined) throw new Error("the dream-and-approve suite has not promoted anything");
  return promotedCommit;
}

/**
 * `kubectl-remram` as the npm package ships it (the bundle, built from this checkout), where kubectl looks for
 * plugins; once per run.
 */
export async function installPlugin(): Promise<string> {
  const plugin = join(pluginDir, "kubectl-remram");
  if (existsSync(plugin)) return pluginDir;
  await bundle("npm", plugin, buildStamp());
  chmodSync(plugin, 0o755);
  return pluginDir;
}

/** A kubeconfig for a ServiceAccount bound to the chart's remram-approver role in the appliance namespace. */
async function approverKubeconfig(): Promise<string> {
  await kubectl(["-n", namespace, "create", "serviceaccount", approver]);
  await kubectl([
    "-n",
    namespace,
    "create",
    "rolebinding",
    approver,
    "--clusterrole=remram-approver",
    `--serviceaccount=${namespace}:${approver}`,
  ]);
  return serviceAccountKubeconfig(approver);
}

/** A kubeconfig with an hour's token of the namespace's ServiceAccount `account`; it holds the token: remove it. */
export async function serviceAccountKubeconfig(account: string): Promise<string> {
  const token = (await kubectl(["-n", namespace, "create", "token", account, "--duration=1h"])).trim();
  const file = join(runDir, `${account}-${namespace}.kubeconfig`);
  writeFileSync(
    file,
    JSON.stringify({
      apiVersion: "v1",
      kind: "Config",
      clusters: [{ name: "box", cluster: { server: kubernetes.server, "insecure-skip-tls-verify": true } }],
      users: [{ name: account, user: { token } }],
      contexts: [{ name: "box", context: { cluster: "box", user: account, namespace } }],
      "current-context": "box",
    }),
    { mode: 0o600 },
  );
  return file;
}

interface Proposal {
  metadata: { name: string };
  spec: { proposalId: string; artifactPath: string; diff: string };
  status?: { phase?: string; promotion?: { commitId?: string }; conditions?: unknown[] };
}

export function describeDreamApproval(): void {
  describe("a dream's proposal approved with `kubectl remram` by another user", () => {
    it("is mirrored, approved by the approver, and committed to the workspace repository on Cortex's volume", async () => {
      // A household constraint from a reflection ("remember this"): the next dream proposes it for an artifact.
      await cortexApi("POST", "/reflect", {
        principal: { userId: "openai-user:alice", householdId: "home", agentId: "main" },
        sessionId: "s-boiler",
        items: [
          {
            type: "constraint",
            statement: "The boiler must be serviced every May",
            scope: { kind: "household", ownerIds: ["home"] },
            sourceTurnIds: ["turn-1"],
            userDirective: true,
          },
        ],
      });
      // Applied by the conversation suite already, as the example manifest does with the appliance.
      await kubectl(["apply", "-f", "-"], JSON.stringify(nightlySchedule));
      const plugins = await installPlugin();
      const admin = kubernetes.kubeconfig;
      const dreamed = await kubectlAs(admin, ["remram", "dream", "now", "nightly", "-n", namespace], plugins);
      expect(dreamed.stdout).toContain("nightly");
      const schedule = await waitFor(
        async () => {
          const json = await kubectl(["-n", namespace, "get", "dreamschedule", "nightly", "-o", "json"]);
          const run = (
            JSON.parse(json) as { status?: { lastRun?: { outcome: string; mirroredProposals?: number } } }
          ).status?.lastRun;
          return run?.outcome === "Succeeded" || run?.outcome === "Failed" ? run : undefined;
        },
        { what: "the requested dream cycle", timeoutMs: 180_000, intervalMs: 2_000 },
      );
      expect(schedule, JSON.stringify(schedule)).toMatchObject({ outcome: "Succeeded" });
      expect(schedule.mirroredProposals).toBeGreaterThanOrEqual(1);
      const proposal = await waitFor(
        async () => {
          const json = await kubectl(["-n", namespace, "get", "artifactproposals", "-o", "json"]);
          // The dream's proposal: the conversation's explicit save proposed a page of its own, pending too.
          return (JSON.parse(json) as { items: Proposal[] }).items.find(
            (item) => item.status?.phase === "Pending" && item.spec.diff.includes("boiler must be serviced"),
          );
        },
        { what: "the dream's ArtifactProposal awaiting a decision", timeoutMs: 60_000, intervalMs: 1_000 },
      );

      const approverConfig = await approverKubeconfig();
      const approved = await kubectlAs(
        approverConfig,
        ["remram", "approve", proposal.metadata.name, "-n", namespace],
        plugins,
      ).finally(() => rmSync(approverConfig, { force: true })); // it holds the approver's token
      expect(approved.stdout).toContain(`approved by ${approverUser}`);
      const promoted = await waitFor(
        async () => {
          const json = await kubectl([
            "-n",
            namespace,
            "get",
            "artifactproposal",
            proposal.metadata.name,
            "-o",
            "json",
          ]);
          const current = JSON.parse(json) as Proposal;
          return current.status?.phase === "Promoted" || current.status?.phase === "Failed"
            ? current
            : undefined;
        },
        { what: "the approved proposal promoted", timeoutMs: 120_000, intervalMs: 1_000 },
      );
      expect(promoted.status?.phase, JSON.stringify(promoted.status?.conditions)).toBe("Promoted");
      const commitId = promoted.status?.promotion?.commitId ?? "";
      expect(commitId).not.toBe("");
      const log = await workspaceLog();
      const entry = log.slice(log.indexOf(commitId));
      expect(log).toContain(commitId);
      expect(entry).toContain(proposal.spec.proposalId);
      expect(entry).toContain(`approved by ${approverUser}`);
      promotedCommit = commitId;
      promotedPath = proposal.spec.artifactPath;
    }, 420_000);

    it(
      "is read by an agent with its read tool, and the tool's output is captured into Cortex for the person",
      async () => {
        if (promotedPath === undefined) throw new Error("no artifact was promoted");
        // The agent's workspace shows the approved artifact through its read-only mount.
        const seen = await nodeInPod(
          "gateway",
          `console.log(require("node:fs").readFileSync(process.argv[1], "utf8"))`,
          `${gatewayWorkspaceDir}/${promotedPath}`,
        );
        expect(seen).toContain("The boiler must be serviced every May");
        const counter = (text: string, name: string) => metricValue(text, `remram_hooks_${name}_total`);
        const before = await hooksMetrics();
        // `reader` runs on the few-shot SmolLM2: offered tools, it calls read on the path it is given.
        const { reply } = await say(`Please read the file ${promotedPath}`, "reader");
        expect(reply.trim()).not.toBe("");
        const after = await waitFor(
          async () => {
            const text = await hooksMetrics();
            return counter(text, "ingested") > counter(before, "ingested") ? text : undefined;
          },
          { what: "the captured tool output ingested by Cortex", timeoutMs: 60_000, intervalMs: 1_000 },
        );
        expect(counter(after, "captures")).toBe(counter(before, "captures") + 1);
        expect(counter(after, "ingest_failures")).toBe(counter(before, "ingest_failures"));
        // The file's text came back from the tool (the artifact mount works) and is now the person's evidence.
        const bundle = await recall("When must the boiler be serviced?", "reader");
        // What Cortex holds of captured tool output, for the message should the check fail.
        const stored = await nodeInPod(
          "cortex",
          `fetch(process.env.REMRAM_OPENSEARCH_URL + "/_search?q=sourceKind:tool_result&_source=text,scope,owner,privacy").then((r) => r.text()).then(console.log)`,
        ).catch(String);
        expect(bundle, `${bundle}\n${stored}\n${await hooksDiagnostics()}`).toMatch(
          /boiler must be serviced every May.{0,800}?\(from read output\)/,
        );
      },
      turnTimeoutMs,
    );
  });
}
