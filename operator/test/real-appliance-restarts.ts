// The two harshest restarts, last before `helm uninstall`: the operator killed while `helm upgrade` replaces it (it
// converges, and no child is made twice or replaced), and the node's kubelet and containerd stopped with every pod's
// processes and started again, as `k3s-killall.sh` or a power cut and reboot would (every pod comes back in place,
// knowledge and the workspace repository intact on their local-path volumes).
import { describe, expect, it } from "vitest";
import { restartNodeRuntime } from "../../test/harness/src/services/node/index.js";
import { waitFor } from "../../test/harness/src/wait.js";
import {
  applianceReadyAndCurrent,
  imageParts,
  images,
  kubectl,
  kubernetes,
  leaseHolder,
  measured,
  namespace,
  operatorNamespace,
  operatorPods,
  uids,
  upgradeOperator,
} from "./real-appliance.js";
import { knownFact, knownFactQuestion, recall, say } from "./real-appliance-conversation.js";
import { approvedCommit, workspaceLog } from "./real-appliance-dream.js";

/** Everything the operator makes for the appliance, and the proposals it mirrors. */
const applianceKinds =
  "deployments,statefulsets,services,secrets,configmaps,pvc,networkpolicies,artifactproposals";

interface PodState {
  uid: string;
  ready: boolean;
  restarts: number;
}

/** The appliance's pods: name → uid, Ready, and the restarts of all their containers. */
async function podStates(ns: string): Promise<Record<string, PodState>> {
  const json = await kubectl(["-n", ns, "get", "pods", "-o", "json"]);
  const items = (
    JSON.parse(json) as {
      items: {
        metadata: { name: string; uid: string };
        status?: {
          conditions?: { type: string; status: string }[];
          containerStatuses?: { restartCount: number }[];
        };
      }[];
    }
  ).items;
  return Object.fromEntries(
    items.map((pod) => [
      pod.metadata.name,
      {
        uid: pod.metadata.uid,
        ready: pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
        restarts: (pod.status?.containerStatuses ?? []).reduce((sum, c) => sum + c.restartCount, 0),
      },
    ]),
  );
}

export function describeRestarts(): void {
  describe("restarts on the real node", () => {
    it("converges after the operator is killed during `helm upgrade`, with no child made twice or replaced", async () => {
      const [objectsBefore, podsBefore] = [await uids(applianceKinds), await uids("pods")];
      const before = (await operatorPods("{.items[*].metadata.name}")).split(" ");
      // Back to the tag it was installed with: a changed image again, so the Deployment rolls a new pod.
      const upgrade = upgradeOperator(imageParts(images.operator).tag, "--timeout=240s");
      upgrade.catch(() => undefined);
      const killed = await waitFor(
        async () => {
          const json = await operatorPods("{range .items[*]}{.metadata.name} {.status.phase}{'\\n'}{end}");
          return json
            .split("\n")
            .map((line) => line.split(" "))
            .find(([name, phase]) => name && !before.includes(name) && phase === "Running")?.[0];
        },
        { what: "the upgrade's new operator pod running", timeoutMs: 120_000, intervalMs: 250 },
      );
      // SIGKILL, as an OOM kill or a crash would: no graceful release of the Lease.
      await kubectl(["-n", operatorNamespace, "delete", "pod", killed, "--grace-period=0", "--force"]);
      const started = Date.now();
      await upgrade;
      // One operator pod left once the old one has terminated: neither the old one nor the killed one.
      const survivor = await waitFor(
        async () => {
          const names = (await operatorPods("{.items[*].metadata.name}")).split(" ").filter(Boolean);
          return names.length === 1 ? names[0] : undefined;
        },
        { what: "one operator pod left", timeoutMs: 120_000, intervalMs: 1_000 },
      );
      expect([...before, killed]).not.toContain(survivor);
      expect(await operatorPods("{.items[*].spec.containers[0].image}")).toBe(images.operator);
      await waitFor(async () => ((await leaseHolder()) === survivor ? true : undefined), {
        what: `the Lease held by ${survivor}`,
        timeoutMs: 120_000,
        intervalMs: 1_000,
      });
      await waitFor(async () => (await applianceReadyAndCurrent()) || undefined, {
        what: "the appliance Ready at its current generation",
        timeoutMs: 120_000,
        intervalMs: 1_000,
      });
      Object.assign(measured.recoveries as object, {
        operatorKilledInUpgrade: { readyAgainMs: Date.now() - started },
      });
      expect(await uids(applianceKinds)).toEqual(objectsBefore);
      expect(await uids("pods")).toEqual(podsBefore);
    }, 360_000);

    it("brings every pod back in place after the node's kubelet and containerd restart, its data intact", async () => {
      const [podsBefore, operatorBefore, claimsBefore] = [
        await podStates(namespace),
        await podStates(operatorNamespace),
        await uids("pvc"),
      ];
      const started = Date.now();
      const node = await restartNodeRuntime(kubernetes);
      // Every pod of the appliance and of the operator: the same pod (not rescheduled), its containers started
      // again (they were killed), Ready.
      const back = (now: Record<string, PodState>, was: Record<string, PodState>) =>
        Object.keys(now).length === Object.keys(was).length &&
        Object.entries(was).every(
          ([name, pod]) => now[name]?.uid === pod.uid && now[name].ready && now[name].restarts > pod.restarts,
        );
      await waitFor(
        async () =>
          back(await podStates(namespace), podsBefore) &&
          back(await podStates(operatorNamespace), operatorBefore) &&
          (await applianceReadyAndCurrent())
            ? true
            : undefined,
        { what: "every pod back and the appliance Ready", timeoutMs: 420_000, intervalMs: 2_000 },
      );
      const readyAgainMs = Date.now() - started;
      Object.assign(measured.recoveries as object, { nodeRuntimeRestart: { ...node, readyAgainMs } });
      console.log(
        `node runtime restart: node Ready after ${node.nodeReadyMs} ms, appliance after ${readyAgainMs} ms`,
      );
      expect(await uids("pvc")).toEqual(claimsBefore);
      expect(await recall(knownFactQuestion)).toContain(knownFact);
      expect(await workspaceLog()).toContain(approvedCommit());
      expect((await say("Are you back?", "main", "drill-restart")).reply.trim()).not.toBe("");
    }, 600_000);
  });
}
