/**
 * What the diagnostics page plots, computed from two scrapes of the components' /metrics (pure): retrieval latency
 * (p50, p95) and the share of degraded answers over the interval between them, the capture backlog at the second,
 * and counter increases (escalations by reason, degraded answers by cause) over any span. Counters are read the way
 * Prometheus reads them: a component that restarted starts again from zero, so a drop counts as a reset.
 */
import type { MetricSample } from "./exposition.js";

export const retrieveRoute = "/retrieve";
export const metricNames = {
  requestBuckets: "cortex_http_request_duration_seconds_bucket",
  degraded: "cortex_retrieve_degraded_total",
  escalations: "remram_hooks_escalations_total",
  queueDepth: "remram_hooks_queue_depth",
} as const;
const wantedNames = new Set<string>(Object.values(metricNames));
export const isWantedMetric = (name: string): boolean => wantedNames.has(name);

/** One scrape of every component, at one time; a component whose /metrics did not answer is absent. */
export interface Scrape {
  /** Milliseconds since the epoch. */
  at: number;
  cortex?: readonly MetricSample[];
  gateway?: readonly MetricSample[];
}

/** One point of the plots: the interval that ends at `at`. */
export interface Reading {
  at: string;
  /** Latency of /retrieve over the interval, in milliseconds; null when nothing was retrieved. */
  retrievalP50Ms: number | null;
  retrievalP95Ms: number | null;
  retrievals: number;
  /** Degraded answers per retrieval over the interval (0..1); null when nothing was retrieved. */
  degradedRate: number | null;
  /** Items waiting in the plugin's capture queue; null when the gateway's metrics were not read. */
  captureBacklog: number | null;
}

export interface Count {
  label: string;
  count: number;
}

function key(sample: MetricSample): string {
  return JSON.stringify(Object.entries(sample.labels).sort(([a], [b]) => a.localeCompare(b)));
}

/** Each counter series' increase from `before` to `after`, keyed by its labels; a drop is a restart from zero. */
function increases(
  before: readonly MetricSample[],
  after: readonly MetricSample[],
  name: string,
): { labels: Readonly<Record<string, string>>; increase: number }[] {
  const earlier = new Map(before.filter((s) => s.name === name).map((s) => [key(s), s.value]));
  return after
    .filter((sample) => sample.name === name)
    .map((sample) => {
      const previous = earlier.get(key(sample)) ?? 0;
      return {
        labels: sample.labels,
        increase: sample.value >= previous ? sample.value - previous : sample.value,
      };
    });
}

/**
 * Prometheus's histogram_quantile over cumulative bucket counts: linear interpolation inside the bucket the rank
 * falls in; the +Inf bucket answers with the highest finite bound. null when the histogram is empty.
 */
export function histogramQuantile(
  q: number,
  buckets: readonly { le: number; count: number }[],
): number | null {
  const sorted = [...buckets].sort((a, b) => a.le - b.le);
  const total = sorted.at(-1)?.count ?? 0;
  if (total <= 0 || sorted.at(-1)?.le !== Number.POSITIVE_INFINITY) return null;
  const rank = q * total;
  let lowerBound = 0;
  let lowerCount = 0;
  for (const bucket of sorted) {
    if (bucket.count >= rank) {
      if (bucket.le === Number.POSITIVE_INFINITY) return sorted.length > 1 ? (sorted.at(-2)?.le ?? 0) : null;
      const inBucket = bucket.count - lowerCount;
      return inBucket <= 0
        ? bucket.le
        : lowerBound + (bucket.le - lowerBound) * ((rank - lowerCount) / inBucket);
    }
    lowerBound = bucket.le;
    lowerCount = bucket.count;
  }
  return null;
}

/** /retrieve's latency buckets over the interval, summed over method and status. */
function retrieveBuckets(
  before: readonly MetricSample[],
  after: readonly MetricSample[],
): { le: number; count: number }[] {
  const byBound = new Map<number, number>();
  for (const { labels, increase } of increases(before, after, metricNames.requestBuckets)) {
    if (labels.route !== retrieveRoute || labels.le === undefined) continue;
    const le = labels.le === "+Inf" ? Number.POSITIVE_INFINITY : Number(labels.le);
    if (Number.isNaN(le)) continue;
    byBound.set(le, (byBound.get(le) ?? 0) + increase);
  }
  return [...byBound].map(([le, count]) => ({ le, count }));
}

const toMs = (seconds: number | null): number | null =>
  seconds === null ? null : Math.round(seconds * 10_000) / 10;

/** What happened between two scrapes: one point of the plots and the counters' increases. */
export interface Interval {
  reading: Reading;
  escalations: Count[];
  degraded: Count[];
}

/**
 * The interval from `before` (each component's last successful scrape) to `after`. A component missing from either
 * leaves its part empty: latency and degraded rate null, no counts, no backlog.
 */
export function interval(before: Scrape, after: Scrape): Interval {
  const cortex = before.cortex !== undefined && after.cortex !== undefined;
  const gateway = before.gateway !== undefined && after.gateway !== undefined;
  const buckets = cortex ? retrieveBuckets(before.cortex ?? [], after.cortex ?? []) : [];
  const retrievals = buckets.find((bucket) => bucket.le === Number.POSITIVE_INFINITY)?.count ?? 0;
  const degraded = cortex
    ? increaseBy(before.cortex ?? [], after.cortex ?? [], metricNames.degraded, "reason")
    : [];
  const degradedCount = degraded.reduce((sum, count) => sum + count.count, 0);
  const backlog = after.gateway?.find(
    (sample) => sample.name === metricNames.queueDepth && sample.labels.queue === "capture",
  );
  return {
    reading: {
      at: new Date(after.at).toISOString(),
      retrievalP50Ms: toMs(histogramQuantile(0.5, buckets)),
      retrievalP95Ms: toMs(histogramQuantile(0.95, buckets)),
      retrievals,
      degradedRate: retrievals === 0 ? null : Math.min(1, degradedCount / retrievals),
      captureBacklog: backlog?.value ?? null,
    },
    escalations: gateway
      ? increaseBy(before.gateway ?? [], after.gateway ?? [], metricNames.escalations, "decision")
      : [],
    degraded,
  };
}

/** Counts summed per label, largest first. */
export function sumCounts(lists: readonly (readonly Count[])[]): Count[] {
  const totals = new Map<string, number>();
  for (const list of lists)
    for (const { label, count } of list) totals.set(label, (totals.get(label) ?? 0) + count);
  return [...totals]
    .map(([label, count]) => ({ label, count }))
    .sort((a, b) => b.count - a.count || a.label.localeCompare(b.label));
}

/** A counter's increase per value of one label, largest first; zero increases are left out. */
export function increaseBy(
  before: readonly MetricSample[],
  after: readonly MetricSample[],
  name: string,
  label: string,
): Count[] {
  const counts = increases(before, after, name).map(({ labels, increase }) => ({
    label: labels[label] ?? "",
    count: increase,
  }));
  return sumCounts([counts]).filter((count) => count.count > 0);
}
