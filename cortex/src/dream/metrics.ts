import { Counter, Gauge, Histogram, type Registry } from "prom-client";

/** The dream cycle's metrics, on Cortex's registry (`/metrics`). */
export interface DreamMetrics {
  running: Gauge;
  progress: Gauge<"measure">;
  duration: Histogram<"outcome">;
  lastCounts: Gauge<"count">;
  changes: Counter<"count">;
  wordings: Counter<"outcome">;
}

export function dreamMetrics(registry: Registry): DreamMetrics {
  return {
    running: new Gauge({
      name: "cortex_dream_running",
      help: "1 while a dream cycle runs",
      registers: [registry],
    }),
    progress: new Gauge({
      name: "cortex_dream_progress",
      help: "Progress of the running dream cycle (objects loaded, neighbour lists built)",
      labelNames: ["measure"],
      registers: [registry],
    }),
    duration: new Histogram({
      name: "cortex_dream_cycle_duration_seconds",
      help: "Dream cycle duration by outcome",
      labelNames: ["outcome"],
      buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
      registers: [registry],
    }),
    lastCounts: new Gauge({
      name: "cortex_dream_last_counts",
      help: "Counts of the last finished dream cycle",
      labelNames: ["count"],
      registers: [registry],
    }),
    changes: new Counter({
      name: "cortex_dream_changes_total",
      help: "What applied dream cycles changed, summed over cycles, by report count",
      labelNames: ["count"],
      registers: [registry],
    }),
    wordings: new Counter({
      name: "cortex_dream_principle_wordings_total",
      help: "Principle wordings asked of the reflection model, by outcome (worded, malformed, unavailable, skipped)",
      labelNames: ["outcome"],
      registers: [registry],
    }),
  };
}
