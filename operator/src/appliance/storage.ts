/**
 * Room left for an appliance's memory, from Cortex's GET /admin/storage (read by a CortexWatch): status.storage and
 * the StorageAvailable condition. A write refused for want of space (a full Cortex volume, OpenSearch past its
 * flood-stage watermark) makes it False; reads go on and nothing acknowledged is lost, so it never blocks Ready.
 */
import type { StorageStatus } from "@remram/contract";
import { ApplianceReason, type RemramApplianceStatus } from "../api/v1alpha1/remram-appliance.js";
import type { ConditionInput } from "../runtime/conditions.js";

export type ApplianceStorage = NonNullable<RemramApplianceStatus["storage"]>;

export const conditionType = "StorageAvailable";
/** Under this share free a volume is low (the RemramCortexVolumeLow alert's threshold). */
export const lowVolumePercent = 10;
/** At or over this share used OpenSearch's disk is low (its default high watermark is 90 %). */
export const lowOpenSearchPercent = 85;
/** How often Cortex is asked while space is short, and otherwise. */
export const shortPollMs = 15_000;
export const normalPollMs = 60_000;

export function applianceStorage(status: StorageStatus): ApplianceStorage {
  const { opensearch, recentRefusal } = status;
  const refusal = opensearch.writeBlocked
    ? `OpenSearch's disk is past its flood-stage watermark${opensearch.floodStageWatermark ? ` (${opensearch.floodStageWatermark})` : ""}: it refuses every write to Cortex's indices until space is freed`
    : recentRefusal?.message;
  return {
    volumes: status.volumes.map((volume) => ({
      name: volume.name,
      availableBytes: volume.availableBytes,
      availablePercent:
        volume.sizeBytes === 0 ? 0 : Math.floor((volume.availableBytes / volume.sizeBytes) * 100),
    })),
    ...(opensearch.diskUsedPercent === undefined
      ? {}
      : { opensearchDiskUsedPercent: opensearch.diskUsedPercent }),
    ...(opensearch.floodStageWatermark === undefined
      ? {}
      : { floodStageWatermark: opensearch.floodStageWatermark }),
    writesRefused: refusal !== undefined,
    ...(refusal === undefined ? {} : { refusal: refusal.slice(0, 500) }),
  };
}

function short(storage: ApplianceStorage): string[] {
  return [
    ...storage.volumes
      .filter((volume) => volume.availablePercent < lowVolumePercent)
      .map((volume) => `the ${volume.name} volume has ${volume.availablePercent}% free`),
    ...(storage.opensearchDiskUsedPercent !== undefined &&
    storage.opensearchDiskUsedPercent >= lowOpenSearchPercent
      ? [`OpenSearch's disk is ${storage.opensearchDiskUsedPercent}% used`]
      : []),
  ];
}

export function storageCondition(storage: ApplianceStorage | undefined): ConditionInput {
  const type = conditionType;
  if (storage === undefined) {
    return {
      type,
      status: "Unknown",
      reason: ApplianceReason.NotCheckedYet,
      message: "asked once Cortex is available",
    };
  }
  if (storage.writesRefused) {
    return {
      type,
      status: "False",
      reason: ApplianceReason.WritesRefused,
      message:
        `writes are refused for want of space (HTTP 507; the gateway and the operator retry them, reads go on): ${storage.refusal ?? ""}`.slice(
          0,
          1024,
        ),
    };
  }
  const low = short(storage);
  if (low.length > 0) {
    return {
      type,
      status: "True",
      reason: ApplianceReason.SpaceLow,
      message: `space is short: ${low.join("; ")}`,
    };
  }
  const volumes = storage.volumes.map((volume) => `${volume.name} ${volume.availablePercent}% free`);
  const opensearch =
    storage.opensearchDiskUsedPercent === undefined
      ? []
      : [
          `OpenSearch's disk ${storage.opensearchDiskUsedPercent}% used${storage.floodStageWatermark ? ` (flood stage ${storage.floodStageWatermark})` : ""}`,
        ];
  return {
    type,
    status: "True",
    reason: ApplianceReason.SpaceAvailable,
    message: [...volumes, ...opensearch].join(", ") || "room left",
  };
}

export function storagePollMs(storage: ApplianceStorage | undefined): number {
  return storage === undefined || storage.writesRefused || short(storage).length > 0
    ? shortPollMs
    : normalPollMs;
}
