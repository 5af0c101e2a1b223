/**
 * The diagnostics page's metrics from Prometheus, where the household runs one: the same series as the app's own
 * scrapes, as the knowledge dashboard queries them (charts/remram-operator/dashboards/knowledge.json), over the
 * last day. The queries are pure (prometheusQueries); prometheusView asks them over HTTP.
 */
import { type Count, type Reading, retrieveRoute, sumCounts } from "./readings.js";
import type { MetricsView } from "./view.js";

export interface PrometheusQueries {
  range: Record<"p50" | "p95" | "retrievals" | "degradedRate" | "captureBacklog", string>;
  instant: Record<"escalations" | "degradedByCause", string>;
}

/** PromQL for the appliance's namespace (the label the chart's PodMonitors set), counts over `windowSeconds`. */
export function prometheusQueries(namespace: string, windowSeconds: number): PrometheusQueries {
  const ns = `namespace=${JSON.stringify(namespace)}`;
  const retrieve = `${ns}, route=${JSON.stringify(retrieveRoute)}`;
  const quantile = (q: number) =>
    `histogram_quantile(${q}, sum by (le) (rate(cortex_http_request_duration_seconds_bucket{${retrieve}}[5m]))) * 1000`;
  return {
    range: {
      p50: quantile(0.5),
      p95: quantile(0.95),
      retrievals: `sum(increase(cortex_http_request_duration_seconds_count{${retrieve}}[5m]))`,
      degradedRate: `sum(rate(cortex_retrieve_degraded_total{${ns}}[5m])) / sum(rate(cortex_http_request_duration_seconds_count{${retrieve}}[5m]))`,
      captureBacklog: `max(remram_hooks_queue_depth{${ns}, queue="capture"})`,
    },
    instant: {
      escalations: `sum by (decision) (increase(remram_hooks_escalations_total{${ns}}[${windowSeconds}s]))`,
      degradedByCause: `sum by (reason) (increase(cortex_retrieve_degraded_total{${ns}}[${windowSeconds}s]))`,
    },
  };
}

interface PromSeries {
  metric: Record<string, string>;
  value?: [number, string];
  values?: [number, string][];
}

const finite = (text: string): number | null => {
  const value = Number(text);
  return Number.isFinite(value) ? value : null;
};
const round = (value: number | null, digits: number): number | null =>
  value === null ? null : Math.round(value * 10 ** digits) / 10 ** digits;

/** The range answers merged into one reading per step, oldest first (pure). */
export function readingsFromRanges(
  ranges: Record<keyof PrometheusQueries["range"], PromSeries[]>,
): Reading[] {
  const byTime = new Map<number, Reading>();
  const at = (time: number): Reading => {
    let reading = byTime.get(time);
    if (reading === undefined) {
      reading = {
        at: new Date(time * 1000).toISOString(),
        retrievalP50Ms: null,
        retrievalP95Ms: null,
        retrievals: 0,
        degradedRate: null,
        captureBacklog: null,
      };
      byTime.set(time, reading);
    }
    return reading;
  };
  for (const [name, series] of Object.entries(ranges) as [keyof PrometheusQueries["range"], PromSeries[]][]) {
    for (const [time, text] of series[0]?.values ?? []) {
      const reading = at(time);
      const value = finite(text);
      if (name === "p50") reading.retrievalP50Ms = round(value, 1);
      else if (name === "p95") reading.retrievalP95Ms = round(value, 1);
      else if (name === "retrievals") reading.retrievals = Math.round(value ?? 0);
      else if (name === "degradedRate") reading.degradedRate = value === null ? null : Math.min(1, value);
      else reading.captureBacklog = value;
    }
  }
  return [...byTime].sort(([a], [b]) => a - b).map(([, reading]) => reading);
}

function countsFrom(series: PromSeries[], label: string): Count[] {
  const counts = series.map((entry) => ({
    label: entry.metric[label] ?? "",
    count: Math.round(finite(entry.value?.[1] ?? "") ?? 0),
  }));
  return sumCounts([counts]).filter((count) => count.count > 0);
}

export interface PrometheusSource {
  url: string;
  namespace: string;
  windowSeconds?: number;
  stepSeconds?: number;
  timeoutMs?: number;
  now?: () => number;
}

async function query(
  source: PrometheusSource,
  path: string,
  params: Record<string, string>,
): Promise<PromSeries[]> {
  const url = new URL(path, source.url.endsWith("/") ? source.url : `${source.url}/`);
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value);
  const response = await fetch(url, { signal: AbortSignal.timeout(source.timeoutMs ?? 10_000) });
  const body = (await response.json().catch(() => undefined)) as
    | { status?: string; error?: string; data?: { result?: PromSeries[] } }
    | undefined;
  if (!response.ok || body?.status !== "success")
    throw new Error(`${path} answered HTTP ${response.status}${body?.error ? `: ${body.error}` : ""}`);
  return body.data?.result ?? [];
}

/** The view from Prometheus; throws when Prometheus does not answer, so the caller can fall back to its scrapes. */
export async function prometheusView(source: PrometheusSource): Promise<MetricsView> {
  const windowSeconds = source.windowSeconds ?? 86_400;
  const step = source.stepSeconds ?? 300;
  const end = Math.floor((source.now ?? Date.now)() / 1000);
  const queries = prometheusQueries(source.namespace, windowSeconds);
  const range = (promql: string) =>
    query(source, "api/v1/query_range", {
      query: promql,
      start: String(end - windowSeconds),
      end: String(end),
      step: String(step),
    });
  const [p50, p95, retrievals, degradedRate, captureBacklog, escalations, degradedByCause] =
    await Promise.all([
      range(queries.range.p50),
      range(queries.range.p95),
      range(queries.range.retrievals),
      range(queries.range.degradedRate),
      range(queries.range.captureBacklog),
      query(source, "api/v1/query", { query: queries.instant.escalations, time: String(end) }),
      query(source, "api/v1/query", { query: queries.instant.degradedByCause, time: String(end) }),
    ]);
  const series = readingsFromRanges({ p50, p95, retrievals, degradedRate, captureBacklog });
  return {
    source: "prometheus",
    windowSeconds,
    series,
    escalations: countsFrom(escalations, "decision"),
    degradedByCause: countsFrom(degradedByCause, "reason"),
    captureBacklog:
      [...series].reverse().find((reading) => reading.captureBacklog !== null)?.captureBacklog ?? null,
    problems: [],
  };
}
