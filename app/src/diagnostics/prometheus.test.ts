import { describe, expect, it } from "vitest";
import { prometheusQueries, readingsFromRanges } from "./prometheus.js";

describe("prometheusQueries", () => {
  it("selects the appliance's namespace and /retrieve, and counts over the window", () => {
    const queries = prometheusQueries("moltbox", 86_400);
    expect(queries.range.p95).toBe(
      'histogram_quantile(0.95, sum by (le) (rate(cortex_http_request_duration_seconds_bucket{namespace="moltbox", route="/retrieve"}[5m]))) * 1000',
    );
    expect(queries.range.captureBacklog).toBe(
      'max(remram_hooks_queue_depth{namespace="moltbox", queue="capture"})',
    );
    expect(queries.instant.escalations).toBe(
      'sum by (decision) (increase(remram_hooks_escalations_total{namespace="moltbox"}[86400s]))',
    );
  });

  it("quotes a namespace so it cannot end the selector", () => {
    expect(prometheusQueries('a"} or vector(1) #', 60).range.captureBacklog).toContain(
      'namespace="a\\"} or vector(1) #"',
    );
  });
});

describe("readingsFromRanges", () => {
  it("merges the series into one reading per step, oldest first; NaN (no retrievals) is null", () => {
    expect(
      readingsFromRanges({
        p50: [
          {
            metric: {},
            values: [
              [120, "12.34"],
              [60, "NaN"],
            ],
          },
        ],
        p95: [{ metric: {}, values: [[120, "40"]] }],
        retrievals: [
          {
            metric: {},
            values: [
              [60, "0"],
              [120, "9.6"],
            ],
          },
        ],
        degradedRate: [{ metric: {}, values: [[120, "0.25"]] }],
        captureBacklog: [
          {
            metric: {},
            values: [
              [60, "4"],
              [120, "0"],
            ],
          },
        ],
      }),
    ).toEqual([
      {
        at: "1970-01-01T00:01:00.000Z",
        retrievalP50Ms: null,
        retrievalP95Ms: null,
        retrievals: 0,
        degradedRate: null,
        captureBacklog: 4,
      },
      {
        at: "1970-01-01T00:02:00.000Z",
        retrievalP50Ms: 12.3,
        retrievalP95Ms: 40,
        retrievals: 10,
        degradedRate: 0.25,
        captureBacklog: 0,
      },
    ]);
  });

  it("answers no readings when Prometheus has no series", () => {
    expect(
      readingsFromRanges({ p50: [], p95: [], retrievals: [], degradedRate: [], captureBacklog: [] }),
    ).toEqual([]);
  });
});
