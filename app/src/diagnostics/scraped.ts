/**
 * The app's own history of the components' metrics, for an appliance without Prometheus: it scrapes Cortex's and
 * the hooks plugin's /metrics every interval and keeps a day of intervals (readings.ts turns two scrapes into one).
 * Memory stays small: only the few metrics the page plots are kept from a scrape.
 */
import { type MetricSample, parseExposition } from "./exposition.js";
import { type Interval, interval, isWantedMetric, type Scrape, sumCounts } from "./readings.js";
import type { MetricsView } from "./view.js";

export type Component = "cortex" | "gateway";

export interface ScrapedMetricsOptions {
  endpoints: Partial<Record<Component, string>>;
  intervalMs: number;
  /** How much history is kept. */
  keepMs: number;
  timeoutMs?: number;
  now?: () => number;
}

export class ScrapedMetrics {
  private readonly history: Interval[] = [];
  /** Each component's last successful scrape, so an interval spans a failed one. */
  private last: Scrape | undefined;
  private readonly problems = new Map<Component, string>();
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;
  private readonly now: () => number;
  private readonly startedAt: number;

  constructor(private readonly options: ScrapedMetricsOptions) {
    this.now = options.now ?? Date.now;
    this.startedAt = this.now();
  }

  start(): void {
    void this.scrape();
    this.timer = setInterval(() => void this.scrape(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.running;
  }

  /** One scrape of every component (the timer's work; tests call it to step without waiting). */
  scrape(): Promise<void> {
    this.running ??= this.scrapeOnce().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async scrapeOnce(): Promise<void> {
    const at = this.now();
    const current: Scrape = { at };
    await Promise.all(
      (Object.entries(this.options.endpoints) as [Component, string][]).map(async ([component, url]) => {
        try {
          current[component] = await this.read(url);
          this.problems.delete(component);
        } catch (error) {
          this.problems.set(component, `${component}'s metrics at ${url}: ${(error as Error).message}`);
        }
      }),
    );
    if (this.last !== undefined) this.history.push(interval(this.last, current));
    const cortex = current.cortex ?? this.last?.cortex;
    const gateway = current.gateway ?? this.last?.gateway;
    this.last = { at, ...(cortex && { cortex }), ...(gateway && { gateway }) };
    const oldest = at - this.options.keepMs;
    while (this.history[0] !== undefined && Date.parse(this.history[0].reading.at) < oldest)
      this.history.shift();
  }

  private async read(url: string): Promise<MetricSample[]> {
    const response = await fetch(url, { signal: AbortSignal.timeout(this.options.timeoutMs ?? 5_000) });
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    return parseExposition(await response.text(), isWantedMetric);
  }

  view(): MetricsView {
    const unconfigured = (["cortex", "gateway"] as const)
      .filter((component) => this.options.endpoints[component] === undefined)
      .map((component) => `${component}'s metrics: no address configured`);
    const latest = this.history.at(-1);
    return {
      source: "metrics",
      windowSeconds: Math.round(Math.min(this.options.keepMs, this.now() - this.startedAt) / 1000),
      series: this.history.map((entry) => entry.reading),
      escalations: sumCounts(this.history.map((entry) => entry.escalations)),
      degradedByCause: sumCounts(this.history.map((entry) => entry.degraded)),
      captureBacklog: latest?.reading.captureBacklog ?? null,
      problems: [
        ...unconfigured,
        ...this.problems.values(),
        ...(this.history.length === 0
          ? [
              `collecting: the first reading comes ${Math.round(this.options.intervalMs / 1000)} s after the app started`,
            ]
          : []),
      ],
    };
  }
}
