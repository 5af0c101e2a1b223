// A fresh appliance restored from a backup, whose disks then fill, on the real node. The upgraded appliance is backed
// up with `kubectl remram backup` into a claim of the household's, then deleted with its volumes and applied again
// with its two data volumes on small tmpfs mounts (OpenSearch's 1 GiB, the data volume's 512 MiB, as local
// PersistentVolumes of a StorageClass of their own, since local-path ignores a claim's size and OpenSearch's
// watermarks read the filesystem). `kubectl remram restore` brings the memory back. Then each volume is filled from
// the host as a full USB disk would be: writes are refused with 507 naming the cause, StorageAvailable turns False,
// reads go on, and freeing the space brings writes back with nothing to repair. Last in the file: it replaces the
// appliance.
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import type { ConsistencyReport } from "@remram/contract";
import { afterAll, describe, expect, it } from "vitest";
import { runDir } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import {
  appliance,
  applianceReadyAndCurrent,
  applyClaim,
  conditions,
  cortexApi,
  kubectl,
  kubectlAs,
  kubernetes,
  measured,
  namespace,
  node,
  patchApplianceSpec,
} from "./real-appliance.js";
import { person, recall } from "./real-appliance-conversation.js";
import { installPlugin, workspaceLog } from "./real-appliance-dream.js";

const run = promisify(execFile);
const storageClass = `remram-small-${namespace}`;
const volumes = [
  { name: "opensearch", size: "1Gi", bytes: 1024 ** 3, claim: "data-moltbox-opensearch-0" },
  { name: "data", size: "512Mi", bytes: 512 * 1024 ** 2, claim: "moltbox-workspace" },
] as const;
const mountDir = (name: string) => join(runDir, `small-volumes-${namespace}`, name);
const fillFile = (name: string) => join(mountDir(name), "fill");
const savedFact = "The freezer in the cellar is defrosted every April.";
const backupClaim = "household-backups";
const backupSpec = { volume: { claimName: backupClaim }, schedule: "30 3 * * *" };

/** What Cortex holds, as its consistency check counts it (the operator's caller runs it). */
async function held(): Promise<ConsistencyReport["counts"]> {
  const report = (await cortexApi("POST", "/admin/check", undefined, "operator")) as ConsistencyReport;
  expect(report.consistent, JSON.stringify(report.findings)).toBe(true);
  return report.counts;
}

/**
 * The ids and statements retrieval answers with, sorted: usage counters move with every recall, so the order of
 * near ties may differ between two asks, the answer itself not.
 */
async function recalled(question: string): Promise<[string, string][]> {
  const answer = JSON.parse(await recall(question)) as { facts: { id: string; statement: string }[] };
  return answer.facts
    .map((fact): [string, string] => [fact.id, fact.statement])
    .sort(([a], [b]) => a.localeCompare(b));
}

async function untilReady(what: string): Promise<void> {
  await waitFor(async () => (await applianceReadyAndCurrent()) || undefined, {
    what,
    timeoutMs: 400_000,
    intervalMs: 2_000,
  });
}

const deleteAppliance = () =>
  kubectl(
    ["-n", namespace, "delete", "remramappliance", "moltbox", "--wait=true", "--timeout=180s"],
    undefined,
    190_000,
  );

/** Everything the small volumes need, and the appliance on them: gone again after the file. */
async function removeSmallVolumes(): Promise<void> {
  await deleteAppliance().catch(() => undefined);
  await kubectl(
    ["-n", namespace, "delete", "pvc", "--all", "--wait=true", "--timeout=120s"],
    undefined,
    130_000,
  ).catch(() => undefined);
  for (const volume of volumes) {
    await kubectl(["delete", "pv", `${namespace}-small-${volume.name}`, "--wait=false"]).catch(
      () => undefined,
    );
    await run("umount", ["-l", mountDir(volume.name)]).catch(() => undefined);
  }
  await kubectl(["delete", "storageclass", storageClass]).catch(() => undefined);
}

/**
 * Fill the mount from the host until `usedShare` of it is used, with files at the volume's top, beside the folders
 * the pods write to. A whole fill ends with `dd` writing until the filesystem says no: nothing is left, however the
 * pods' own writes moved meanwhile.
 */
async function fill(name: string, usedShare: number): Promise<void> {
  const stats = statfsSync(mountDir(name));
  const size = stats.blocks * stats.bsize;
  const used = size - stats.bavail * stats.bsize;
  const headroom = usedShare >= 1 ? 4 * 1024 ** 2 : 0;
  const more = Math.max(0, Math.floor(size * usedShare) - used - headroom);
  await run("fallocate", ["-l", String(more), fillFile(name)]);
  if (usedShare >= 1)
    await run("dd", ["if=/dev/zero", `of=${fillFile(name)}-rest`, "bs=4096"]).catch(() => undefined);
}

function free(name: string): void {
  for (const file of [fillFile(name), `${fillFile(name)}-rest`]) rmSync(file, { force: true });
}

const storageCondition = async () =>
  (await conditions()).find((condition) => condition.type === "StorageAvailable");

async function untilStorage(status: "True" | "False", what: string) {
  return waitFor(
    async () => {
      const condition = await storageCondition();
      return condition?.status === status ? condition : undefined;
    },
    { what, timeoutMs: 180_000, intervalMs: 2_000 },
  );
}

const ingest = (key: string, statement: string) =>
  cortexApi("POST", "/ingest", {
    events: [
      {
        kind: "knowledge",
        provenanceKey: key,
        scope: "user",
        owner: { userId: person.userId },
        // Household, not private: recall asks as for a cloud model (the default), which sees no private item.
        privacy: "household",
        statement,
        type: "fact",
        source: "user",
      },
    ],
  });

const archiveTranscript = (sessionId: string) =>
  cortexApi("POST", "/archive/transcripts", {
    principal: { userId: person.userId, agentId: "main" },
    sessionId,
    channel: "telegram",
    endReason: "reset",
    endedAt: new Date().toISOString(),
    messages: [
      { role: "user", content: "Remind me when the chimney sweep comes.", at: new Date().toISOString() },
      {
        role: "assistant",
        content: "The chimney sweep comes on the first Monday of October.",
        at: new Date().toISOString(),
      },
    ],
  });

/** The refusal a write gets: cortexApi fails with "<status> <body>" as Cortex answered, after kubectl's words. */
const refusal = (write: () => Promise<unknown>) =>
  write().then(
    () => "accepted",
    (error: Error) => error.message,
  );

export function describeFullDisks(): void {
  describe("a fresh appliance restored from a backup, on small volumes that fill", () => {
    afterAll(removeSmallVolumes, 300_000);

    it("comes back from `kubectl remram restore` with the memory, history and archive it had", async () => {
      // The upgraded appliance backed up into the household's claim, as a box is before its disk is replaced.
      await applyClaim(backupClaim, "1Gi");
      await patchApplianceSpec({ backup: backupSpec });
      await untilReady("the appliance Ready with its backup volume");
      // Cortex's pod rolls to mount the claim; the plugin must reach the new one.
      await kubectl(
        ["-n", namespace, "rollout", "status", "deployment/moltbox-cortex", "--timeout=300s"],
        undefined,
        310_000,
      );
      const plugins = await installPlugin();
      const remram = async (...args: string[]) =>
        (await kubectlAs(kubernetes.kubeconfig, ["remram", ...args, "-n", namespace], plugins)).stdout;
      const backup = JSON.parse(await remram("backup", "-o", "json")) as { id: string };
      const [countsBefore, historyBefore, answerBefore] = [
        await held(),
        await workspaceLog(),
        await recalled("When is the boiler serviced?"),
      ];
      expect(answerBefore.map(([, statement]) => statement).join("\n")).toContain(
        "annual service is due every March",
      );

      // The appliance and its data volumes gone, as a dead disk takes them; the models volume stays (models are
      // pulled again from anywhere) and so does the backup claim.
      await deleteAppliance();
      await kubectl(
        [
          "-n",
          namespace,
          "delete",
          "pvc",
          ...volumes.map((volume) => volume.claim),
          "--wait=true",
          "--timeout=120s",
        ],
        undefined,
        130_000,
      );
      await kubectl(
        ["apply", "-f", "-"],
        JSON.stringify({
          apiVersion: "storage.k8s.io/v1",
          kind: "StorageClass",
          metadata: { name: storageClass },
          provisioner: "kubernetes.io/no-provisioner",
          volumeBindingMode: "WaitForFirstConsumer",
        }),
      );
      for (const volume of volumes) {
        mkdirSync(mountDir(volume.name), { recursive: true });
        await run("mount", [
          "-t",
          "tmpfs",
          "-o",
          `size=${volume.bytes},mode=0777`,
          "tmpfs",
          mountDir(volume.name),
        ]);
        await kubectl(
          ["apply", "-f", "-"],
          JSON.stringify({
            apiVersion: "v1",
            kind: "PersistentVolume",
            metadata: { name: `${namespace}-small-${volume.name}` },
            spec: {
              capacity: { storage: volume.size },
              accessModes: ["ReadWriteOnce"],
              persistentVolumeReclaimPolicy: "Retain",
              storageClassName: storageClass,
              claimRef: { namespace, name: volume.claim },
              local: { path: mountDir(volume.name) },
              nodeAffinity: {
                required: {
                  nodeSelectorTerms: [
                    {
                      matchExpressions: [
                        { key: "kubernetes.io/hostname", operator: "In", values: [node.name] },
                      ],
                    },
                  ],
                },
              },
            },
          }),
        );
      }
      const onSmall = (size: string) => ({ size, storageClassName: storageClass });
      const appliedAt = Date.now();
      await kubectl(
        ["apply", "-f", "-"],
        JSON.stringify({
          ...appliance,
          spec: {
            ...appliance.spec,
            opensearch: { ...appliance.spec.opensearch, storage: onSmall("1Gi") },
            workspace: { ...appliance.spec.workspace, storage: onSmall("512Mi") },
            backup: backupSpec,
          },
        }),
      );
      await untilReady("the fresh appliance on small volumes Ready");
      measured.freshApplianceReadyMs = Date.now() - appliedAt;

      const restoredAt = Date.now();
      expect(await remram("restore", backup.id)).toMatch(new RegExp(`^Restored ${backup.id} onto moltbox`));
      measured.restoreOntoFreshApplianceMs = Date.now() - restoredAt;
      expect(await held()).toEqual(countsBefore);
      expect(await workspaceLog()).toBe(historyBefore);
      expect(await recalled("When is the boiler serviced?")).toEqual(answerBefore);
    }, 1_200_000);

    it("refuses writes with 507 and a False StorageAvailable when OpenSearch's disk or the data volume is full, answers reads, and recovers once space is freed", async () => {
      await ingest("freezer", savedFact);
      await untilStorage("True", "StorageAvailable True on the fresh volumes");

      // OpenSearch's disk past its flood-stage watermark (95 %): it blocks writes to every index itself.
      await fill("opensearch", 0.97);
      const filledAt = Date.now();
      const refused = await waitFor(
        async () => {
          const answer = await refusal(() => ingest(`full-${Date.now()}`, "The attic light bulb is an E14."));
          return answer === "accepted" ? undefined : answer;
        },
        { what: "a write refused by OpenSearch's flood stage", timeoutMs: 120_000, intervalMs: 3_000 },
      );
      measured.opensearchFullToRefusedMs = Date.now() - filledAt;
      expect(refused).toMatch(/\b507 \{.*flood-stage watermark/);
      const full = await untilStorage("False", "StorageAvailable False with OpenSearch's disk full");
      expect(full.reason).toBe("WritesRefused");
      expect(full.message).toMatch(/flood-stage watermark/);
      expect(await recall("When is the freezer defrosted?")).toContain("defrosted every April");
      free("opensearch");
      const freedAt = Date.now();
      await waitFor(
        async () =>
          (await refusal(() => ingest("after-free", "The attic light bulb is an E14."))) === "accepted"
            ? true
            : undefined,
        {
          what: "writes accepted after OpenSearch's disk was freed",
          timeoutMs: 180_000,
          intervalMs: 3_000,
        },
      );
      measured.opensearchFreedToWritableMs = Date.now() - freedAt;
      expect(await recall("Which bulb does the attic light take?")).toContain("E14");
      await untilStorage("True", "StorageAvailable True after OpenSearch's disk was freed");

      // The data volume full (the archive and the artifact repository live on it): the transcript is refused,
      // the gateway keeps it queued and sends it again, and it is stored once there is room.
      await fill("data", 1);
      expect(await refusal(() => archiveTranscript("full-volume"))).toMatch(/\b507 \{/);
      const volumeFull = await untilStorage("False", "StorageAvailable False with the data volume full");
      expect(volumeFull.reason).toBe("WritesRefused");
      expect(await recall("When is the freezer defrosted?")).toContain("defrosted every April");
      free("data");
      expect(await refusal(() => archiveTranscript("full-volume"))).toBe("accepted");
      await untilStorage("True", "StorageAvailable True after the data volume was freed");
    }, 1_200_000);
  });
}
