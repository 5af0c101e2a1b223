/**
 * Where the diagnostics page's metrics come from: Prometheus when the appliance names one and it answers, else the
 * app's own scrapes of the components' /metrics (which run either way, so a Prometheus outage still shows data).
 */
import { type PrometheusSource, prometheusView } from "./prometheus.js";
import type { ScrapedMetrics } from "./scraped.js";
import type { MetricsView } from "./view.js";

export class DiagnosticsMetrics {
  constructor(
    readonly scraped: ScrapedMetrics,
    private readonly prometheus?: PrometheusSource,
  ) {}

  async view(): Promise<MetricsView> {
    if (this.prometheus === undefined) return this.scraped.view();
    try {
      return await prometheusView(this.prometheus);
    } catch (error) {
      const own = this.scraped.view();
      const problem = `Prometheus at ${this.prometheus.url} did not answer (${(error as Error).message}); this is what the app scraped itself`;
      return { ...own, problems: [problem, ...own.problems] };
    }
  }
}
