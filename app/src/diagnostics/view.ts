/** The diagnostics page's metrics, whichever source answered them (the scraping history or Prometheus). */
import type { Count, Reading } from "./readings.js";

export interface MetricsView {
  /** "prometheus" when Prometheus answered, "metrics" when the app's own scrapes of the components' /metrics did. */
  source: "prometheus" | "metrics";
  /** Seconds the series and the counts cover (less than a day while the app has not run that long). */
  windowSeconds: number;
  /** Oldest first. */
  series: Reading[];
  /** Model decisions over the window, by `target:reason` (cloud:complexity, local:default_local, ...). */
  escalations: Count[];
  /** Degraded answers over the window, by cause. */
  degradedByCause: Count[];
  /** Items waiting in the plugin's capture queue now; null when unknown. */
  captureBacklog: number | null;
  /** What could not be read, in words; the rest of the view still holds. */
  problems: string[];
}
