/**
 * How full the volumes are that Cortex writes files to (the workspace repository and the archive), read with
 * statfs(2) at each scrape: a full volume refuses writes (HTTP 507), so an alert on what is left comes first.
 */
import { statfs } from "node:fs/promises";
import { Gauge, type Registry } from "prom-client";

type VolumeStats = { volume: string; size: number; available: number }[];

/** The gauges, and the reading they share (GET /admin/storage reads it too). */
export function registerVolumeMetrics(
  registry: Registry,
  folders: Readonly<Record<string, string>>,
): () => Promise<VolumeStats> {
  // A scrape collects both gauges at once: they share one statfs per folder.
  let reading: Promise<VolumeStats> | undefined;
  const read = () => {
    reading ??= readVolumes(folders).finally(() => {
      reading = undefined;
    });
    return reading;
  };
  const labelNames = ["volume"] as const;
  new Gauge({
    name: "cortex_volume_size_bytes",
    help: "Size of the filesystem holding each of Cortex's folders (workspace, archive)",
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const { volume, size } of await read()) this.set({ volume }, size);
    },
  });
  new Gauge({
    name: "cortex_volume_available_bytes",
    help: "Bytes Cortex may still write on the filesystem holding each of its folders (workspace, archive)",
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const { volume, available } of await read()) this.set({ volume }, available);
    },
  });
  return read;
}

async function readVolumes(folders: Readonly<Record<string, string>>): Promise<VolumeStats> {
  const stats: VolumeStats = [];
  for (const [volume, folder] of Object.entries(folders)) {
    // A folder not created yet gives no sample rather than a wrong one.
    const found = await statfs(folder).catch(() => undefined);
    if (found)
      stats.push({ volume, size: found.blocks * found.bsize, available: found.bavail * found.bsize });
  }
  return stats;
}
