import { describe, expect, it } from "vitest";
import { renderPrometheusConfig } from "./prometheus.js";

describe("the test Prometheus's configuration", () => {
  it("scrapes each target with the labels a PodMonitor would give it, and rewrites a label value exactly", () => {
    const config = JSON.parse(
      renderPrometheusConfig(
        [
          { job: "cortex", address: "127.0.0.1:8080", labels: { namespace: "home", pod: "box-cortex-0" } },
          {
            job: "remram-operator",
            address: "127.0.0.1:9000",
            metricsPath: "/m",
            labels: { namespace: "remram-system" },
            rewrite: [{ label: "name", from: "remram-operator-a.b", to: "remram-operator" }],
          },
        ],
        1,
      ),
    );
    expect(config.global).toEqual({ scrape_interval: "1s", evaluation_interval: "1s" });
    expect(config.scrape_configs[0]).toEqual({
      job_name: "cortex",
      metrics_path: "/metrics",
      static_configs: [{ targets: ["127.0.0.1:8080"], labels: { namespace: "home", pod: "box-cortex-0" } }],
    });
    expect(config.scrape_configs[1].metric_relabel_configs).toEqual([
      {
        source_labels: ["name"],
        regex: "remram-operator-a\\.b",
        target_label: "name",
        replacement: "remram-operator",
      },
    ]);
  });
});
