/**
 * How full the volumes are that Cortex writes files to (the workspace repository and the archive), read with
 * statfs(2) at each scrape: a full volume refuses writes (HTTP 507), so an alert on what is left comes first.
 */
import { statfs } from "node:fs/promises";
import { Gauge, type Registry } from "prom-client";

export function registerVolumeMetrics(registry: Registry, folders: Readonly<Record<string, string>>): void {
  const read = async (folder: string) => {
    try {
      const stats = await statfs(folder);
      return { size: stats.blocks * stats.bsize, available: stats.bavail * stats.bsize };
    } catch {
      return undefined; // not created yet: no sample rather than a wrong one
    }
  };
  const labelNames = ["volume"] as const;
  new Gauge({
    name: "cortex_volume_size_bytes",
    help: "Size of the filesystem holding each of Cortex's folders (workspace, archive)",
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const [volume, folder] of Object.entries(folders)) {
        const stats = await read(folder);
        if (stats) this.set({ volume }, stats.size);
      }
    },
  });
  new Gauge({
    name: "cortex_volume_available_bytes",
    help: "Bytes Cortex may still write on the filesystem holding each of its folders (workspace, archive)",
    labelNames,
    registers: [registry],
    async collect() {
      this.reset();
      for (const [volume, folder] of Object.entries(folders)) {
        const stats = await read(folder);
        if (stats) this.set({ volume }, stats.available);
      }
    },
  });
}
