// The household's memory backed up on real pods: a claim the household made for its backup disk (local-path here,
// a USB disk or a NAS share at home) named in spec.backup; Cortex rolls onto it, the operator backs up on the
// schedule into status and the BackedUp condition, and `kubectl remram backup` (the plugin built here) takes one
// by hand and lists them, each with the appliance's Secrets sealed to the household's age key. Restoring onto an
// empty Cortex is tested on real stores in cortex/src/backup.
import { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { createGunzip } from "node:zlib";
import { gatewayStateAttachmentName as gatewayStateAttachment } from "@remram/contract";
import { Decrypter, generateX25519Identity, identityToRecipient } from "age-encryption";
import { load } from "js-yaml";
import { extract } from "tar-stream";
import { describe, expect, it } from "vitest";
import { waitFor } from "../../test/harness/src/wait.js";
import { secretsAttachmentName } from "../src/appliance/secrets-bundle.js";
import {
  applianceReadyAndCurrent,
  applyClaim,
  conditions,
  kubectlAs,
  kubernetes,
  measured,
  namespace,
  nodeInPod,
  patchApplianceSpec,
} from "./real-appliance.js";
import { installPlugin } from "./real-appliance-dream.js";

const claim = "household-backups";
const patchBackup = (schedule: string, ageRecipient: string) =>
  patchApplianceSpec({
    backup: {
      volume: { claimName: claim },
      schedule,
      keep: 2,
      secrets: { ageRecipients: [ageRecipient] },
    },
  });

export function describeBackup(): void {
  describe("the household's memory backed up into a volume of its own", () => {
    it("is backed up on schedule and with `kubectl remram backup` into the claim spec.backup names", async () => {
      const notConfigured = (await conditions()).find((condition) => condition.type === "BackedUp");
      expect(notConfigured).toMatchObject({ status: "False", reason: "BackupsNotConfigured" });
      await applyClaim(claim, "1Gi");
      const householdKey = await generateX25519Identity();
      const recipient = await identityToRecipient(householdKey);
      const configuredAt = Date.now();
      // Every minute while this test runs; a rare slot again before the rest of the suite.
      await patchBackup("* * * * *", recipient);
      let lastSeen: unknown;
      const backedUp = await waitFor(
        async () => {
          const condition = (await conditions()).find((c) => c.type === "BackedUp");
          lastSeen = condition;
          return condition?.status === "True" ? condition : undefined;
        },
        { what: "BackedUp=True on the schedule", timeoutMs: 300_000, intervalMs: 2_000 },
      ).catch((error: unknown) => {
        throw new Error(
          `${error instanceof Error ? error.message : String(error)}; BackedUp: ${JSON.stringify(lastSeen)}`,
        );
      });
      measured.firstScheduledBackupSeconds = Math.round((Date.now() - configuredAt) / 1000);
      expect(backedUp.reason).toBe("BackupSucceeded");
      expect(backedUp.message).toMatch(/^backup-\S+ completed at \S+: [1-9]\d* knowledge objects/);

      const plugins = await installPlugin();
      const admin = kubernetes.kubeconfig;
      const started = Date.now();
      const taken = JSON.parse(
        (await kubectlAs(admin, ["remram", "backup", "-n", namespace, "-o", "json"], plugins)).stdout,
      ) as { id: string; bytes: number; counts: Record<string, number>; attachments?: string[] };
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
      // The plugin sealed the appliance's Secrets into it, as the operator does for scheduled ones: the household's
      // key opens them, the gateway's token and Cortex's credentials among them.
      expect(taken.attachments).toEqual([secretsAttachmentName, gatewayStateAttachment]);
      const sealed = Buffer.from(
        await nodeInPod(
          "cortex",
          "process.stdout.write(require('fs').readFileSync(process.argv[1]).toString('base64'))",
          `/var/lib/remram/backups/${taken.id}/${secretsAttachmentName}`,
        ),
        "base64",
      );
      const decrypter = new Decrypter();
      decrypter.addIdentity(householdKey);
      const secrets = load(await decrypter.decrypt(sealed, "text")) as {
        items: { metadata: { name: string } }[];
      };
      expect(secrets.items.map((item) => item.metadata.name)).toEqual(
        expect.arrayContaining([
          "moltbox-gateway-config",
          "moltbox-cortex-operator",
          "moltbox-cortex-gateway",
        ]),
      );

      // Cortex sealed the gateway's own folder to the same key: OpenClaw's session and agent stores (SQLite) of the
      // conversation earlier, and the hooks plugin's queue, are in it; its caches are not.
      const gatewayState = await decrypter.decrypt(
        Buffer.from(
          await nodeInPod(
            "cortex",
            "process.stdout.write(require('fs').readFileSync(process.argv[1]).toString('base64'))",
            `/var/lib/remram/backups/${taken.id}/${gatewayStateAttachment}`,
          ),
          "base64",
        ),
      );
      measured.gatewayStateBytes = gatewayState.length;
      const entries: string[] = [];
      const reading = extract();
      const sizes = new Map<string, number>();
      reading.on("entry", (header, stream, next) => {
        entries.push(header.name);
        const top = header.name.split("/").slice(0, 2).join("/");
        sizes.set(top, (sizes.get(top) ?? 0) + (header.size ?? 0));
        stream.on("end", next);
        stream.resume();
      });
      await pipeline(Readable.from([Buffer.from(gatewayState)]), createGunzip(), reading);
      measured.gatewayStateLargest = [...sizes].sort((a, b) => b[1] - a[1]).slice(0, 5);
      expect(entries).toEqual(
        expect.arrayContaining([
          "openclaw.json",
          "state/openclaw.sqlite",
          "agents/main/agent/openclaw-agent.sqlite",
        ]),
      );
      expect(entries.some((name) => name.startsWith("remram-hooks/queue/"))).toBe(true);
      expect(entries.filter((name) => /^(cache|tmp)(\/|$)/.test(name))).toEqual([]);

      await patchBackup("0 3 1 1 *", recipient);
      await waitFor(async () => ((await applianceReadyAndCurrent()) ? true : undefined), {
        what: "the appliance Ready at its new generation",
        timeoutMs: 180_000,
        intervalMs: 2_000,
      });
    }, 600_000);
  });
}
