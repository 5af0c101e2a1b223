import type { StorageStatus } from "@remram/contract";
import { describe, expect, it } from "vitest";
import { applianceStorage, normalPollMs, shortPollMs, storageCondition, storagePollMs } from "./storage.js";

const mib = 1024 * 1024;
const roomy: StorageStatus = {
  volumes: [
    { name: "workspace", sizeBytes: 1024 * mib, availableBytes: 460 * mib },
    { name: "archive", sizeBytes: 1024 * mib, availableBytes: 820 * mib },
  ],
  opensearch: { diskUsedPercent: 38, floodStageWatermark: "95%", writeBlocked: false },
};

describe("the room left for the household's memory, as status and a condition", () => {
  it("is True with what is free on each volume and OpenSearch's disk", () => {
    const storage = applianceStorage(roomy);
    expect(storage).toEqual({
      volumes: [
        { name: "workspace", availableBytes: 460 * mib, availablePercent: 44 },
        { name: "archive", availableBytes: 820 * mib, availablePercent: 80 },
      ],
      opensearchDiskUsedPercent: 38,
      floodStageWatermark: "95%",
      writesRefused: false,
    });
    expect(storageCondition(storage)).toEqual({
      type: "StorageAvailable",
      status: "True",
      reason: "SpaceAvailable",
      message: "workspace 44% free, archive 80% free, OpenSearch's disk 38% used (flood stage 95%)",
    });
    expect(storagePollMs(storage)).toBe(normalPollMs);
  });

  it("is still True but says SpaceLow when a volume or OpenSearch's disk runs short, and is asked more often", () => {
    const storage = applianceStorage({
      ...roomy,
      volumes: [{ name: "archive", sizeBytes: 1024 * mib, availableBytes: 50 * mib }],
      opensearch: { diskUsedPercent: 88, writeBlocked: false },
    });
    expect(storageCondition(storage)).toMatchObject({
      status: "True",
      reason: "SpaceLow",
      message: "space is short: the archive volume has 4% free; OpenSearch's disk is 88% used",
    });
    expect(storagePollMs(storage)).toBe(shortPollMs);
  });

  it("is False naming OpenSearch's block, or the refusal Cortex answered a writer with", () => {
    const blocked = applianceStorage({ ...roomy, opensearch: { ...roomy.opensearch, writeBlocked: true } });
    expect(blocked).toMatchObject({ writesRefused: true });
    expect(storageCondition(blocked)).toMatchObject({
      status: "False",
      reason: "WritesRefused",
      message:
        "writes are refused for want of space (HTTP 507; the gateway and the operator retry them, reads go on): OpenSearch's disk is past its flood-stage watermark (95%): it refuses every write to Cortex's indices until space is freed",
    });
    const refused = applianceStorage({
      ...roomy,
      recentRefusal: {
        at: "2026-11-28T10:00:00.000Z",
        cause: "volume",
        message: "Cortex's volume is full, so nothing was stored; free space on it and retry (ENOSPC)",
      },
    });
    expect(storageCondition(refused).message).toContain("Cortex's volume is full, so nothing was stored");
    expect(storagePollMs(refused)).toBe(shortPollMs);
  });

  it("is Unknown until Cortex has been asked", () => {
    expect(storageCondition(undefined)).toMatchObject({ status: "Unknown", reason: "NotCheckedYet" });
  });
});
