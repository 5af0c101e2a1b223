// The household's memory backed up on real pods: a claim the household made for its backup disk (local-path here,
// a USB disk or a NAS share at home) named in spec.backup; Cortex rolls onto it, the operator backs up on the
// schedule into status and the BackedUp condition, and `kubectl remram backup` (the plugin built here) takes one
// by hand and lists them. Restoring onto an empty Cortex is tested on real stores in cortex/src/backup.
import { describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import {
  applianceReadyAndCurrent,
  conditions,
  kubectl,
  kubectlAs,
  kubernetes,
  measured,
  namespace,
  nodeInPod,
} from "./real-appliance.js";
import { installPlugin } from "./real-appliance-dream.js";

const claim = "household-backups";
const patchBackup = (schedule: string) =>
  kubectl([
    "-n",
    namespace,
    "patch",
    "remramappliance",
    "moltbox",
    "--type=merge",
    "-p",
    JSON.stringify({ spec: { backup: { volume: { claimName: claim }, schedule, keep: 2 } } }),
  ]);

export function describeBackup(): void {
  describe("the household's memory backed up into a volume of its own", () => {
    it("is backed up on schedule and with `kubectl remram backup` into the claim spec.backup names", async () => {
      const notConfigured = (await conditions()).find((condition) => condition.type === "BackedUp");
      expect(notConfigured).toMatchObject({ status: "False", reason: "BackupsNotConfigured" });
      await kubectl(
        ["-n", namespace, "apply", "-f", "-"],
        JSON.stringify({
          apiVersion: "v1",
          kind: "PersistentVolumeClaim",
          metadata: { name: claim, namespace },
          spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } },
        }),
      );
      const configuredAt = Date.now();
      // Every minute while this test runs; a rare slot again before the rest of the suite.
      await patchBackup("* * * * *");
      const backedUp = await waitFor(
        async () => {
          const condition = (await conditions()).find((c) => c.type === "BackedUp");
          return condition?.status === "True" ? condition : undefined;
        },
        { what: "BackedUp=True on the schedule", timeoutMs: 300_000, intervalMs: 2_000 },
      );
      measured.firstScheduledBackupSeconds = Math.round((Date.now() - configuredAt) / 1000);
      expect(backedUp.reason).toBe("BackupSucceeded");
      expect(backedUp.message).toMatch(/^backup-\S+ completed at \S+: [1-9]\d* knowledge objects/);

      const plugins = await installPlugin();
      const admin = kubernetes.kubeconfig;
      const started = Date.now();
      const taken = JSON.parse(
        (await kubectlAs(admin, ["remram", "backup", "-n", namespace, "-o", "json"], plugins)).stdout,
      ) as { id: string; bytes: number; counts: Record<string, number> };
      measured.backupByHand = { seconds: Math.round((Date.now() - started) / 1000), bytes: taken.bytes };
      expect(taken.counts.knowledge).toBeGreaterThan(0);
      expect(taken.counts.commits).toBeGreaterThan(0);
      const list = await kubectlAs(admin, ["remram", "backup", "list", "-n", namespace], plugins);
      expect(list.stdout).toContain(taken.id);
      // In the volume, complete: its manifest names every file with its digest.
      const manifest = JSON.parse(
        await nodeInPod(
          "cortex",
          "process.stdout.write(require('fs').readFileSync(process.argv[1], 'utf8'))",
          `/var/lib/remram/backups/${taken.id}/manifest.json`,
        ),
      ) as { files: { name: string; sha256: string }[] };
      expect(manifest.files.map((file) => file.name)).toEqual(
        expect.arrayContaining(["index-knowledge.ndjson.gz", "repository.bundle", "archive.ndjson.gz"]),
      );

      await patchBackup("0 3 1 1 *");
      await waitFor(async () => ((await applianceReadyAndCurrent()) ? true : undefined), {
        what: "the appliance Ready at its new generation",
        timeoutMs: 180_000,
        intervalMs: 2_000,
      });
    }, 600_000);
  });
}
