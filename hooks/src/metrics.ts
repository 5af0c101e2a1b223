/**
 * The plugin's own counters. They live in the process-wide shared state (hooks and the service run on
 * different plugin instances) and are served in the Prometheus text format by the plugin service on
 * `metrics.host:metrics.port` at /metrics; Cortex keeps its own metrics separately (seed 000 §6.6).
 */

export interface Counters {
  injections: number;
  injectionSkips: Record<string, number>;
  retrieveTimeouts: number;
  retrieveErrors: number;
  privateItemsWithheld: number;
  escalations: Record<string, number>;
  captures: number;
  captureDuplicates: number;
  captureSkips: Record<string, number>;
  queueDrops: Record<string, number>;
  ingested: number;
  ingestFailures: number;
  reflectionsEnqueued: number;
  reflections: Record<string, number>;
  hookErrors: Record<string, number>;
}

export function emptyCounters(): Counters {
  return {
    injections: 0,
    injectionSkips: {},
    retrieveTimeouts: 0,
    retrieveErrors: 0,
    privateItemsWithheld: 0,
    escalations: {},
    captures: 0,
    captureDuplicates: 0,
    captureSkips: {},
    queueDrops: {},
    ingested: 0,
    ingestFailures: 0,
    reflectionsEnqueued: 0,
    reflections: {},
    hookErrors: {},
  };
}

export function increment(map: Record<string, number>, label: string, by = 1): void {
  map[label] = (map[label] ?? 0) + by;
}

export interface Gauges {
  captureQueueDepth: number;
  reflectionQueueDepth: number;
}

interface Family {
  name: string;
  help: string;
  type: "counter" | "gauge";
  samples: { labels?: Record<string, string>; value: number }[];
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
      ],
    },
  ];
  const lines: string[] = [];
  for (const family of families) {
    lines.push(`# HELP ${family.name} ${family.help}`, `# TYPE ${family.name} ${family.type}`);
    for (const sample of family.samples) {
      const labels = Object.entries(sample.labels ?? {})
        .map(([key, value]) => `${key}="${escapeLabel(value)}"`)
        .join(",");
      lines.push(`${family.name}${labels === "" ? "" : `{${labels}}`} ${sample.value}`);
    }
  }
  return `${lines.join("\n")}\n`;
}
