// Disks that fill, on the real node: the appliance applied again with its two data volumes on small tmpfs mounts
// (OpenSearch's 1 GiB, the data volume's 512 MiB, as local PersistentVolumes of a StorageClass of their own, since
// local-path ignores a claim's size and OpenSearch's watermarks read the filesystem). Each is filled from the host
// as a full USB disk would be: writes are refused with 507 naming the cause, StorageAvailable turns False, reads go
// on, and freeing the space brings writes back with nothing to repair. Last in the file: it replaces the appliance.
import { execFile } from "node:child_process";
import { mkdirSync, rmSync, statfsSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { runDir } from "../../test/harness/src/paths.js";
import { waitFor } from "../../test/harness/src/wait.js";
import {
  appliance,
  applianceReadyAndCurrent,
  conditions,
  cortexApi,
  kubectl,
  measured,
  namespace,
  node,
} from "./real-appliance.js";
import { person, recall } from "./real-appliance-conversation.js";

const run = promisify(execFile);
const storageClass = `remram-small-${namespace}`;
const volumes = [
  { name: "opensearch", size: "1Gi", bytes: 1024 ** 3, claim: "data-moltbox-opensearch-0" },
  { name: "data", size: "512Mi", bytes: 512 * 1024 ** 2, claim: "moltbox-workspace" },
] as const;
const mountDir = (name: string) => join(runDir, `small-volumes-${namespace}`, name);
const fillFile = (name: string) => join(mountDir(name), "fill");
const savedFact = "The freezer in the cellar is defrosted every April.";

/** Fill the mount from the host until `usedShare` of it is used (a file the pods never see: it sits beside their folders). */
async function fill(name: string, usedShare: number): Promise<void> {
  const stats = statfsSync(mountDir(name));
  const size = stats.blocks * stats.bsize;
  const used = size - stats.bavail * stats.bsize;
  const more = Math.max(0, Math.floor(size * usedShare) - used);
  await run("fallocate", ["-l", String(more), fillFile(name)]);
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
        privacy: "private",
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

/** The refusal a write gets (cortexApi fails with the status and body Cortex answered). */
const refusal = (write: () => Promise<unknown>) =>
  write().then(
    () => "accepted",
    (error: Error) => error.message,
  );

export function describeFullDisks(): void {
  describe("the appliance's disks filling up", () => {
    it("refuses writes with 507 and a False StorageAvailable when OpenSearch's disk or the data volume is full, answers reads, and recovers once space is freed", async () => {
      // The appliance again, its volumes on small mounts; the models volume goes too (the registry is local).
      await kubectl([
        "-n",
        namespace,
        "delete",
        "remramappliance",
        "moltbox",
        "--wait=true",
        "--timeout=180s",
      ]);
      await kubectl(["-n", namespace, "delete", "pvc", "--all", "--wait=true", "--timeout=120s"]);
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
      try {
        const onSmall = (size: string) => ({ size, storageClassName: storageClass });
        const small = {
          ...appliance,
          spec: {
            ...appliance.spec,
            opensearch: { ...appliance.spec.opensearch, storage: onSmall("1Gi") },
            workspace: { ...appliance.spec.workspace, storage: onSmall("512Mi") },
          },
        };
        const appliedAt = Date.now();
        await kubectl(["apply", "-f", "-"], JSON.stringify(small));
        await waitFor(async () => (await applianceReadyAndCurrent()) || undefined, {
          what: "the appliance on small volumes Ready",
          timeoutMs: 400_000,
          intervalMs: 2_000,
        });
        measured.smallVolumesApplyToReadyMs = Date.now() - appliedAt;
        await ingest("freezer", savedFact);
        await untilStorage("True", "StorageAvailable True on the fresh volumes");

        // OpenSearch's disk past its flood-stage watermark (95 %): it blocks writes to every index itself.
        await fill("opensearch", 0.97);
        const filledAt = Date.now();
        const refused = await waitFor(
          async () => {
            const answer = await refusal(() =>
              ingest(`full-${Date.now()}`, "The attic light bulb is an E14."),
            );
            return answer === "accepted" ? undefined : answer;
          },
          { what: "a write refused by OpenSearch's flood stage", timeoutMs: 120_000, intervalMs: 3_000 },
        );
        measured.opensearchFullToRefusedMs = Date.now() - filledAt;
        expect(refused).toMatch(/507.*flood-stage watermark/);
        const full = await untilStorage("False", "StorageAvailable False with OpenSearch's disk full");
        expect(full.reason).toBe("WritesRefused");
        expect(full.message).toMatch(/flood-stage watermark/);
        expect(await recall("When is the freezer defrosted?")).toContain("defrosted every April");
        rmSync(fillFile("opensearch"));
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
        expect(await refusal(() => archiveTranscript("full-volume"))).toMatch(/507/);
        const volumeFull = await untilStorage("False", "StorageAvailable False with the data volume full");
        expect(volumeFull.reason).toBe("WritesRefused");
        expect(await recall("When is the freezer defrosted?")).toContain("defrosted every April");
        rmSync(fillFile("data"));
        expect(await refusal(() => archiveTranscript("full-volume"))).toBe("accepted");
        await untilStorage("True", "StorageAvailable True after the data volume was freed");
      } finally {
        await kubectl([
          "-n",
          namespace,
          "delete",
          "remramappliance",
          "moltbox",
          "--wait=true",
          "--timeout=180s",
        ]).catch(() => undefined);
        await kubectl(["-n", namespace, "delete", "pvc", "--all", "--wait=true", "--timeout=120s"]).catch(
          () => undefined,
        );
        for (const volume of volumes) {
          await kubectl(["delete", "pv", `${namespace}-small-${volume.name}`, "--wait=false"]).catch(
            () => undefined,
          );
          await run("umount", ["-l", mountDir(volume.name)]).catch(() => undefined);
        }
        await kubectl(["delete", "storageclass", storageClass]).catch(() => undefined);
      }
    }, 1_200_000);
  });
}
