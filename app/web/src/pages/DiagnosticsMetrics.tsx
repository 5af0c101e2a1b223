/**
 * The diagnostics page's plots: retrieval latency, degraded answers and the capture backlog over the last day, and
 * model decisions (escalations) and degraded answers by cause, from Prometheus or the app's own scrapes of the
 * components' /metrics. Loaded apart from the CRs, so a component that cannot be read never hides the conditions.
 */
import { api } from "../api.js";
import { BarChart } from "../components/BarChart.js";
import { ErrorText, StatusLine } from "../components/basics.js";
import { LineChart } from "../components/LineChart.js";
import { duration, formatDate } from "../format.js";
import { useLoad } from "../hooks.js";
import type { DiagnosticsMetrics } from "../types.js";

/** "cloud:complexity" spaced so the chart's labels read "Cloud: complexity". */
const decisionLabel = (decision: string): string => decision.replace(":", ": ");

export function MetricsSection() {
  const loaded = useLoad(() => api.diagnosticsMetrics(), []);
  const metrics = loaded.data;
  return (
    <section aria-labelledby="metrics-heading">
      <h2 id="metrics-heading">Knowledge service over time</h2>
      <StatusLine>{loaded.loading ? "Loading metrics…" : ""}</StatusLine>
      <ErrorText message={loaded.error} />
      {metrics === undefined ? null : <Metrics metrics={metrics} />}
    </section>
  );
}

function Metrics({ metrics }: { metrics: DiagnosticsMetrics }) {
  const { series } = metrics;
  const from = formatDate(series[0]?.at);
  const to = formatDate(series.at(-1)?.at);
  const retrievals = series.reduce((sum, reading) => sum + reading.retrievals, 0);
  return (
    <>
      <p>
        {metrics.source === "prometheus"
          ? "From Prometheus"
          : "From the components' /metrics, read by the app"}
        , over the last {duration(metrics.windowSeconds * 1000)}: {retrievals} retrievals. Capture backlog
        now: {metrics.captureBacklog === null ? "unknown" : `${metrics.captureBacklog} items`}.
      </p>
      {metrics.problems.length === 0 ? null : (
        <ul class="problems">
          {metrics.problems.map((problem) => (
            <li key={problem}>{problem}</li>
          ))}
        </ul>
      )}
      {series.length === 0 ? null : (
        <div class="charts">
          <LineChart
            title="Retrieval latency"
            unit=" ms"
            from={from}
            to={to}
            series={[
              { name: "p50", values: series.map((reading) => reading.retrievalP50Ms) },
              { name: "p95", values: series.map((reading) => reading.retrievalP95Ms) },
            ]}
          />
          <LineChart
            title="Degraded answers"
            unit=" %"
            from={from}
            to={to}
            series={[
              {
                name: "share of retrievals",
                values: series.map((reading) =>
                  reading.degradedRate === null ? null : Math.round(reading.degradedRate * 1000) / 10,
                ),
              },
            ]}
          />
          <LineChart
            title="Capture backlog"
            unit=" items"
            from={from}
            to={to}
            series={[{ name: "waiting", values: series.map((reading) => reading.captureBacklog) }]}
          />
        </div>
      )}
      <h3>Model decisions by reason</h3>
      {metrics.escalations.length === 0 ? (
        <p>No model decisions in this time.</p>
      ) : (
        <BarChart
          title="Model decisions by reason"
          counts={metrics.escalations.map(({ label, count }) => [decisionLabel(label), count] as const)}
        />
      )}
      <h3>Degraded answers by cause</h3>
      {metrics.degradedByCause.length === 0 ? (
        <p>No degraded answers in this time.</p>
      ) : (
        <BarChart
          title="Degraded answers by cause"
          counts={metrics.degradedByCause.map(({ label, count }) => [label, count] as const)}
        />
      )}
    </>
  );
}
