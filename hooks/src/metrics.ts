/**
 * The plugin's own counters. They live in the process-wide shared state (hooks and the service run on
 * different plugin instances) and are served in the Prometheus text format by the plugin service on
 * `metrics.host:metrics.port` at /metrics; Cortex keeps its own metrics separately (seed 000 §6.6).
 */

/** Upper bounds (seconds) of the retrieve latency histogram: around the 250 ms default cap. */
export const retrieveLatencyBuckets = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5] as const;

export interface Histogram {
  /** Cumulative counts per bucket of retrieveLatencyBuckets. */
  buckets: number[];
  sum: number;
  count: number;
}

export interface Counters {
  injections: number;
  /** Wall time of every /retrieve the hooks waited for, timeouts and failures included. */
  retrieveLatency: Histogram;
  injectionSkips: Record<string, number>;
  retrieveTimeouts: number;
  retrieveErrors: number;
  privateItemsWithheld: number;
  escalations: Record<string, number>;
  captures: number;
  captureDuplicates: number;
  captureSkips: Record<string, number>;
  /** Injected content removed before it could reach Cortex again, by where it was found. */
  injectedStripped: Record<string, number>;
  queueDrops: Record<string, number>;
  ingested: number;
  ingestFailures: number;
  reflectionsEnqueued: number;
  reflections: Record<string, number>;
  /** Parts of the reflection deltas queued for /reflect, by kind, and parts left out, by reason. */
  reflectionDeltaParts: Record<string, number>;
  hookErrors: Record<string, number>;
  /** Session transcripts for the archive: staged per hook, queued, delivered, discarded (transcript-hooks.ts). */
  transcripts: Record<string, number>;
  /** memory_search and memory_get calls, by tool and outcome. */
  memoryToolCalls: Record<string, number>;
  /** Explicit saves ("remember that …") by what the run could tell the person; later deliveries of queued ones. */
  explicitSaves: Record<string, number>;
}

export function emptyCounters(): Counters {
  return {
    injections: 0,
    retrieveLatency: { buckets: retrieveLatencyBuckets.map(() => 0), sum: 0, count: 0 },
    injectionSkips: {},
    retrieveTimeouts: 0,
    retrieveErrors: 0,
    privateItemsWithheld: 0,
    escalations: {},
    captures: 0,
    captureDuplicates: 0,
    captureSkips: {},
    injectedStripped: {},
    queueDrops: {},
    ingested: 0,
    ingestFailures: 0,
    reflectionsEnqueued: 0,
    reflections: {},
    reflectionDeltaParts: {},
    hookErrors: {},
    transcripts: {},
    memoryToolCalls: {},
    explicitSaves: {},
  };
}

export function increment(map: Record<string, number>, label: string, by = 1): void {
  map[label] = (map[label] ?? 0) + by;
}

export function observe(histogram: Histogram, seconds: number): void {
  retrieveLatencyBuckets.forEach((bound, index) => {
    if (seconds <= bound) histogram.buckets[index] = (histogram.buckets[index] ?? 0) + 1;
  });
  histogram.sum += seconds;
  histogram.count += 1;
}

export interface Gauges {
  captureQueueDepth: number;
  reflectionQueueDepth: number;
  reflectQueueDepth: number;
  transcriptQueueDepth?: number;
  explicitSaveQueueDepth?: number;
}

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge" | "histogram";
  samples: { suffix?: string; labels?: Record<string, string>; value: number }[];
}

function labelled(label: string, values: Record<string, number>): Family["samples"] {
  return Object.keys(values)
    .sort()
    .map((key) => ({ labels: { [label]: key }, value: values[key] ?? 0 }));
}

function escapeLabel(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/\n/g, "\\n").replace(/"/g, '\\"');
}

/** Prometheus exposition format 0.0.4, families in a fixed order. */
export function renderPrometheus(counters: Counters, gauges: Gauges): string {
  const families: Family[] = [
    {
      name: "remram_hooks_injections_total",
      help: "Knowledge blocks injected into a prompt.",
      type: "counter",
      samples: [{ value: counters.injections }],
    },
    {
      name: "remram_hooks_injection_skips_total",
      help: "Turns without injection, by reason.",
      type: "counter",
      samples: labelled("reason", counters.injectionSkips),
    },
    {
      name: "remram_hooks_retrieve_timeouts_total",
      help: "Cortex /retrieve calls cut off by the hard timeout.",
      type: "counter",
      samples: [{ value: counters.retrieveTimeouts }],
    },
    {
      name: "remram_hooks_retrieve_errors_total",
      help: "Cortex /retrieve calls that failed otherwise.",
      type: "counter",
      samples: [{ value: counters.retrieveErrors }],
    },
    {
      name: "remram_hooks_private_items_withheld_total",
      help: "Private knowledge items kept from a cloud model.",
      type: "counter",
      samples: [{ value: counters.privateItemsWithheld }],
    },
    {
      name: "remram_hooks_escalations_total",
      help: "Model decisions of before_model_resolve, by target and reason.",
      type: "counter",
      samples: labelled("decision", counters.escalations),
    },
    {
      name: "remram_hooks_captures_total",
      help: "Tool results written to the durable queue.",
      type: "counter",
      samples: [{ value: counters.captures }],
    },
    {
      name: "remram_hooks_capture_duplicates_total",
      help: "Tool results already queued (same provenance key).",
      type: "counter",
      samples: [{ value: counters.captureDuplicates }],
    },
    {
      name: "remram_hooks_capture_skips_total",
      help: "Tool results not captured, by reason.",
      type: "counter",
      samples: labelled("reason", counters.captureSkips),
    },
    {
      name: "remram_hooks_injected_content_stripped_total",
      help: "Pieces of injected knowledge removed from what is sent to Cortex, by where they were found.",
      type: "counter",
      samples: labelled("where", counters.injectedStripped),
    },
    {
      name: "remram_hooks_queue_drops_total",
      help: "Queued items given up, by queue and reason.",
      type: "counter",
      samples: labelled("reason", counters.queueDrops),
    },
    {
      name: "remram_hooks_ingested_total",
      help: "Captured items Cortex /ingest acknowledged.",
      type: "counter",
      samples: [{ value: counters.ingested }],
    },
    {
      name: "remram_hooks_ingest_failures_total",
      help: "Failed /ingest attempts (retried with backoff).",
      type: "counter",
      samples: [{ value: counters.ingestFailures }],
    },
    {
      name: "remram_hooks_reflections_enqueued_total",
      help: "Reflection jobs queued by agent_end.",
      type: "counter",
      samples: [{ value: counters.reflectionsEnqueued }],
    },
    {
      name: "remram_hooks_reflections_total",
      help: "Reflection jobs finished, by outcome.",
      type: "counter",
      samples: labelled("outcome", counters.reflections),
    },
    {
      name: "remram_hooks_reflection_delta_parts_total",
      help: "Parts of reflection deltas queued for /reflect, by kind; dropped_* were left out of them, by reason.",
      type: "counter",
      samples: labelled("part", counters.reflectionDeltaParts),
    },
    {
      name: "remram_hooks_explicit_saves_total",
      help: "Explicit saves (remember that …): saved, queued, rejected, dropped, nothing_to_save; delivered later.",
      type: "counter",
      samples: labelled("outcome", counters.explicitSaves),
    },
    {
      name: "remram_hooks_transcripts_total",
      help: "Session transcripts for the archive: staged_<hook>, queued, duplicate, archived, rejected, deleted_discarded, stale_sealed.",
      type: "counter",
      samples: labelled("outcome", counters.transcripts),
    },
    {
      name: "remram_hooks_memory_tool_calls_total",
      help: "memory_search and memory_get calls, by outcome.",
      type: "counter",
      samples: labelled("outcome", counters.memoryToolCalls),
    },
    {
      name: "remram_hooks_hook_errors_total",
      help: "Hook handlers that failed and fell back to the safe default.",
      type: "counter",
      samples: labelled("hook", counters.hookErrors),
    },
    {
      name: "remram_hooks_queue_depth",
      help: "Items waiting in the durable queues.",
      type: "gauge",
      samples: [
        { labels: { queue: "capture" }, value: gauges.captureQueueDepth },
        { labels: { queue: "reflection" }, value: gauges.reflectionQueueDepth },
        { labels: { queue: "reflect" }, value: gauges.reflectQueueDepth },
        { labels: { queue: "transcript" }, value: gauges.transcriptQueueDepth ?? 0 },
        { labels: { queue: "explicit_save" }, value: gauges.explicitSaveQueueDepth ?? 0 },
      ],
    },
  ];
  const latency = counters.retrieveLatency;
  families.splice(1, 0, {
    name: "remram_hooks_retrieve_duration_seconds",
    help: "Time the prompt path spent on Cortex /retrieve, capped by the retrieve timeout.",
    type: "histogram",
    samples: [
      ...retrieveLatencyBuckets.map((bound, index) => ({
        suffix: "_bucket",
        labels: { le: String(bound) },
        value: latency.buckets[index] ?? 0,
      })),
      { suffix: "_bucket", labels: { le: "+Inf" }, value: latency.count },
      { suffix: "_sum", value: latency.sum },
      { suffix: "_count", value: latency.count },
    ],
  });
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels ?? {})
        .map(([key, value]) => `${key}="${escapeLabel(value)}"`)
        .join(",");
      lines.push(`${family.name}${sample.suffix ?? ""}${labels === "" ? "" : `{${labels}}`} ${sample.value}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
