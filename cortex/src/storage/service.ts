/**
 * How much room Cortex has left: its folders' volumes (statfs, read by the caller), OpenSearch's disk and its
 * flood-stage watermark, whether OpenSearch has blocked writes to Cortex's indices, and the last write Cortex
 * refused for want of space. Each OpenSearch question is asked on its own, so an external cluster that refuses
 * one (a user without cluster monitor rights) still answers the others.
 */
import type { StorageStatus } from "@remram/contract";
import type { CortexContext } from "../context.js";
import { type CortexStore, request } from "../store/client.js";

export type VolumeReading = { volume: string; size: number; available: number };

/** A refusal older than this no longer says writes are refused now. */
export const recentRefusalMs = 10 * 60_000;

async function diskUsedPercent(store: CortexStore): Promise<number | undefined> {
  const { body } = await request<{ "disk.percent"?: string | null }[]>(
    store,
    "GET",
    "/_cat/allocation?format=json&h=disk.percent",
    undefined,
    { timeoutMs: 5_000 },
  );
  const used = body.map((row) => Number(row["disk.percent"])).filter((value) => Number.isFinite(value));
  return used.length === 0 ? undefined : Math.max(...used);
}

type WatermarkSettings = {
  cluster?: { routing?: { allocation?: { disk?: { watermark?: { flood_stage?: string } } } } };
};

async function floodStageWatermark(store: CortexStore): Promise<string | undefined> {
  const { body } = await request<
    Record<"transient" | "persistent" | "defaults", WatermarkSettings | undefined>
  >(
    store,
    "GET",
    "/_cluster/settings?include_defaults=true&filter_path=*.cluster.routing.allocation.disk.watermark.flood_stage",
    undefined,
    { timeoutMs: 5_000 },
  );
  const of = (settings: WatermarkSettings | undefined) =>
    settings?.cluster?.routing?.allocation?.disk?.watermark?.flood_stage;
  return of(body.transient) ?? of(body.persistent) ?? of(body.defaults);
}

async function writeBlocked(store: CortexStore): Promise<boolean> {
  const { knowledge, vectors, chunks, dimensions } = store.indices;
  const { body } = await request<Record<string, { settings?: Record<string, string> }>>(
    store,
    "GET",
    `/${knowledge},${vectors},${chunks},${dimensions}/_settings/index.blocks.read_only_allow_delete?flat_settings=true`,
    undefined,
    { timeoutMs: 5_000 },
  );
  return Object.values(body).some(
    (index) => index.settings?.["index.blocks.read_only_allow_delete"] === "true",
  );
}

const unanswered = () => undefined;

export async function readStorage(
  context: Pick<CortexContext, "store" | "clock" | "fullRefusals">,
  volumes: () => Promise<VolumeReading[]>,
): Promise<StorageStatus> {
  const { store } = context;
  const [readings, used, floodStage, blocked] = await Promise.all([
    volumes(),
    diskUsedPercent(store).catch(unanswered),
    floodStageWatermark(store).catch(unanswered),
    writeBlocked(store).catch(() => false),
  ]);
  const last = context.fullRefusals.last;
  const recent = last !== undefined && context.clock().getTime() - last.at.getTime() < recentRefusalMs;
  return {
    volumes: readings.map(({ volume, size, available }) => ({
      name: volume,
      sizeBytes: size,
      availableBytes: available,
    })),
    opensearch: {
      ...(used === undefined ? {} : { diskUsedPercent: used }),
      ...(floodStage === undefined ? {} : { floodStageWatermark: floodStage }),
      writeBlocked: blocked,
    },
    ...(recent && { recentRefusal: { at: last.at.toISOString(), cause: last.cause, message: last.message } }),
  };
}
