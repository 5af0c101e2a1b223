// The path every existing box takes: the previous release (its chart and its own images, built from
// UPGRADE_FROM_COMMIT by hack/install-images.sh) installed and holding a person's knowledge, then `helm upgrade` to
// this tree's chart and images with the values file the box was installed with. Last in the file: the suite's
// appliance and namespace go first (`helm uninstall` kept them), so this appliance starts empty on the old release.
import { join } from "node:path";
import type { MigrationStatus } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { operatorChartValues } from "../../test/harness/src/appliance.js";
import { runDir } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import {
  applianceReadyAndCurrent,
  chart,
  conditions,
  cortexApi,
  helm,
  imageParts,
  images,
  installApplianceAndOperator,
  kubectl,
  kubectlAs,
  kubernetes,
  measured,
  namespace,
  node,
  release,
  uids,
  valuesFile,
} from "./real-appliance.js";
import { person, recall } from "./real-appliance-conversation.js";
import { installPlugin, workspaceLog } from "./real-appliance-dream.js";

const committedStatement = "The boiler's annual service is due every March.";
const pendingStatement = "The spare house key hangs in the garden shed.";
const rollbackStatement = "The bicycle pump is on the hook in Tromsø's garage.";

/** Cortex's index migrations, as the operator's caller reads them. */
const migrations = async () =>
  (await cortexApi("GET", "/admin/migrations", undefined, "operator")) as MigrationStatus;

/** The release's Deployments rolled out on the given images, then the appliance Ready at its generation. */
async function rolledOnto(cortexImage: string, hooksImage: string, what: string): Promise<void> {
  await waitFor(
    async () => {
      const [cortexImages, gatewayImages] = [
        await templateImages("moltbox-cortex"),
        await templateImages("moltbox-gateway"),
      ];
      return cortexImages.includes(cortexImage) && gatewayImages.includes(hooksImage) ? true : undefined;
    },
    { what: `the appliance's Deployments on ${what}'s images`, timeoutMs: 120_000, intervalMs: 1_000 },
  );
  for (const deployment of ["moltbox-cortex", "moltbox-gateway"]) {
    await kubectl(
      ["-n", namespace, "rollout", "status", `deployment/${deployment}`, "--timeout=300s"],
      undefined,
      310_000,
    );
  }
  await waitFor(async () => (await applianceReadyAndCurrent()) || undefined, {
    what: `the appliance Ready at its generation on ${what}`,
    timeoutMs: 300_000,
    intervalMs: 1_000,
  });
}

/** The images a Deployment's pod template runs, init containers included (the gateway's carries the plugin). */
const templateImages = (deployment: string): Promise<string> =>
  kubectl([
    "-n",
    namespace,
    "get",
    "deployment",
    deployment,
    "-o",
    "jsonpath={.spec.template.spec.initContainers[*].image} {.spec.template.spec.containers[*].image}",
  ]);

/**
 * The previous release upgraded to this one; after the rebuild, `helm rollback` to the previous release (it recalls
 * and saves on the rebuilt index) and `helm upgrade` again (nothing left to rebuild, what the rollback saved is
 * there), about 3 minutes of it.
 */
export function describeUpgradeFromPrevious(): void {
  describe("an upgrade from the previous release", () => {
    it("keeps the appliance, its volumes and a person's knowledge through `helm upgrade` to this release", async () => {
      const previous = images.previous;
      // In the whole file the release is gone already (`helm uninstall` above); run alone (-t), it goes here.
      await helm("uninstall", release, "--wait").catch(() => undefined);
      await kubectl(["delete", "namespace", namespace, "--wait=true", "--timeout=300s"], undefined, 310_000);

      // The previous release as its chart and images install it; the values differ only in the image names, and
      // leave out the operands it does not know (its values schema refuses them): remram-app came later.
      const current = operatorChartValues(node, [namespace]);
      const knownBefore = Object.fromEntries(
        Object.entries(current.operandImages).filter(([operand]) => operand !== "app"),
      );
      const appliedAt = await installApplianceAndOperator(
        previous.chart,
        {
          ...current,
          image: { ...imageParts(previous.operator), pullPolicy: "Never" },
          operandImages: { ...knownBefore, cortex: previous.cortex, hooks: previous.hooks },
        },
        join(runDir, `appliance-values-previous-${release}.json`),
      );
      await kubectl(
        ["-n", namespace, "wait", "--for=condition=Ready", "remramappliance/moltbox", "--timeout=400s"],
        undefined,
        410_000,
      );
      measured.previousApplyToReadyMs = Date.now() - appliedAt;
      expect(await templateImages("moltbox-cortex")).toContain(previous.cortex);
      expect(await templateImages("moltbox-gateway")).toContain(previous.hooks);

      // What a person saved while the box ran the previous release: one page approved and committed to the
      // workspace repository (Cortex's /promote, as the operator calls it after an approval), one save pending.
      const save = async (statement: string) =>
        (await cortexApi("POST", "/remember", {
          principal: { userId: person.userId, agentId: "main" },
          statement,
        })) as { proposal: { status: string; id?: string } };
      const committed = await save(committedStatement);
      expect(committed.proposal.status).toBe("pending");
      const { commitId } = (await cortexApi(
        "POST",
        "/promote",
        { proposalId: committed.proposal.id, approvedBy: "ingrid" },
        "operator",
      )) as { commitId: string };
      const pending = await save(pendingStatement);
      expect(pending.proposal.status).toBe("pending");
      const [claimsBefore, applianceBefore, historyBefore] = [
        await uids("pvc"),
        await uids("remramappliance"),
        await workspaceLog(),
      ];

      const upgradedAt = Date.now();
      await helm("upgrade", release, chart, "-f", valuesFile, "--wait", "--timeout=300s");
      // The new operator rolls the children onto this release's images, then reports Ready at the generation.
      await rolledOnto(images.cortex, images.hooks, "this release");
      measured.upgradeFromPreviousToReadyMs = Date.now() - upgradedAt;

      expect(await uids("remramappliance")).toEqual(applianceBefore);
      expect(await uids("pvc")).toEqual(claimsBefore);
      expect(await recall("When is the boiler serviced?")).toContain("annual service is due every March");
      expect(await recall("Where is the spare house key?")).toContain(
        "spare house key hangs in the garden shed",
      );
      const history = await workspaceLog();
      expect(history).toBe(historyBefore);
      expect(history).toContain(commitId);
      const held = (await cortexApi("GET", "/proposals?status=pending", undefined, "operator")) as {
        proposals: { id: string }[];
      };
      expect(held.proposals.map((proposal) => proposal.id)).toContain(pending.proposal.id);

      // The previous release's knowledge index (template 3) was rebuilt beside it after Cortex started, and kept.
      const migrated = await waitFor(
        async () => {
          const status = await migrations();
          return status.state === "current" ? status : undefined;
        },
        { what: "the knowledge index rebuilt after the upgrade", timeoutMs: 120_000, intervalMs: 1_000 },
      );
      expect(migrated.rebuild).toMatchObject({ fromTemplateVersion: 3 });
      expect(migrated.rebuild?.copied).toBe(migrated.rebuild?.total);
      expect(migrated.kept.map((kept) => kept.index)).toEqual([migrated.rebuild?.from]);
      measured.knowledgeRebuild = migrated.rebuild;
      // The operator reads it too (at once when the new Cortex came up): the appliance names the kept index.
      await waitFor(
        async () => {
          const indexes = (await conditions()).find((condition) => condition.type === "IndexesCurrent");
          return indexes?.status === "True" && indexes.message.includes(`${migrated.rebuild?.from} until `)
            ? true
            : undefined;
        },
        { what: "IndexesCurrent naming the kept index", timeoutMs: 90_000, intervalMs: 1_000 },
      );

      // `helm rollback` after the migration: the previous release runs on the rebuilt index and keeps working.
      const rolledBackAt = Date.now();
      await helm("rollback", release, "--wait", "--timeout=300s");
      await rolledOnto(previous.cortex, previous.hooks, "the previous release");
      measured.rollbackToReadyMs = Date.now() - rolledBackAt;
      expect(await recall("When is the boiler serviced?")).toContain("annual service is due every March");
      const savedOnRollback = await save(rollbackStatement);
      expect(savedOnRollback.proposal.status).toBe("pending");

      // Forward again: nothing left to rebuild, the same index kept, and what the rollback saved is there.
      await helm("upgrade", release, chart, "-f", valuesFile, "--wait", "--timeout=300s");
      await rolledOnto(images.cortex, images.hooks, "this release");
      const again = await migrations();
      expect(again.state).toBe("current");
      expect(again.rebuild).toBeUndefined();
      expect(again.kept.map((kept) => kept.index)).toEqual([migrated.rebuild?.from]);
      expect(await recall("Where is the bicycle pump?")).toContain("bicycle pump is on the hook");

      // The admin confirms the migration with the plugin: the kept index goes.
      const plugins = await installPlugin();
      const confirmed = await kubectlAs(
        kubernetes.kubeconfig,
        ["remram", "migrations", "confirm", "-n", namespace],
        plugins,
      );
      expect(confirmed.stdout).toContain(`Deleted ${migrated.rebuild?.from} from moltbox`);
      expect((await migrations()).kept).toEqual([]);
    }, 1_500_000);
  });
}
