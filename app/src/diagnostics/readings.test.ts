import { describe, expect, it } from "vitest";
import type { MetricSample } from "./exposition.js";
import { histogramQuantile, interval, metricNames, sumCounts } from "./readings.js";

const bounds = ["0.01", "0.025", "0.05", "0.1", "+Inf"];
/** /retrieve's cumulative buckets for the given counts per bucket (one entry per bound). */
function retrieve(perBucket: number[], status = "200"): MetricSample[] {
  let cumulative = 0;
  return bounds.map((le, index) => {
    cumulative += perBucket[index] ?? 0;
    return {
      name: metricNames.requestBuckets,
      labels: { le, route: "/retrieve", method: "POST", status },
      value: cumulative,
    };
  });
}
const counter = (name: string, labels: Record<string, string>, value: number): MetricSample => ({
  name,
  labels,
  value,
});

describe("histogramQuantile", () => {
  it("interpolates inside the bucket the rank falls in, as Prometheus does", () => {
    const buckets = [
      { le: 0.01, count: 0 },
      { le: 0.05, count: 10 },
      { le: Number.POSITIVE_INFINITY, count: 10 },
    ];
    expect(histogramQuantile(0.5, buckets)).toBeCloseTo(0.03);
    expect(histogramQuantile(0.95, buckets)).toBeCloseTo(0.048);
  });

  it("answers the highest finite bound for a rank in +Inf, and null for an empty histogram", () => {
    expect(
      histogramQuantile(0.99, [
        { le: 0.1, count: 1 },
        { le: Number.POSITIVE_INFINITY, count: 5 },
      ]),
    ).toBe(0.1);
    expect(histogramQuantile(0.5, [{ le: Number.POSITIVE_INFINITY, count: 0 }])).toBeNull();
  });
});

describe("interval", () => {
  const before = {
    at: 0,
    cortex: [
      ...retrieve([5, 5, 0, 0, 0]),
      counter(metricNames.degraded, { reason: "embedding_unavailable" }, 2),
      counter(
        metricNames.requestBuckets,
        { le: "+Inf", route: "/ingest", method: "POST", status: "200" },
        50,
      ),
    ],
    gateway: [
      counter(metricNames.escalations, { decision: "cloud:complexity" }, 4),
      counter(metricNames.escalations, { decision: "local:default_local" }, 10),
    ],
  };

  it("turns two scrapes into latency quantiles, the degraded share and counter increases of that interval", () => {
    const after = {
      at: 60_000,
      cortex: [
        // 10 more retrievals, all between 25 and 50 ms, over two statuses; /ingest is not counted.
        ...retrieve([5, 5, 6, 0, 0]),
        ...retrieve([0, 0, 4, 0, 0], "503"),
        counter(metricNames.degraded, { reason: "embedding_unavailable" }, 3),
        counter(metricNames.degraded, { reason: "opensearch_timeout" }, 1),
        counter(
          metricNames.requestBuckets,
          { le: "+Inf", route: "/ingest", method: "POST", status: "200" },
          90,
        ),
      ],
      gateway: [
        counter(metricNames.escalations, { decision: "cloud:complexity" }, 6),
        counter(metricNames.escalations, { decision: "local:default_local" }, 10),
        counter(metricNames.queueDepth, { queue: "capture" }, 3),
        counter(metricNames.queueDepth, { queue: "reflection" }, 9),
      ],
    };
    const result = interval(before, after);
    expect(result.reading).toEqual({
      at: "1970-01-01T00:01:00.000Z",
      retrievalP50Ms: 37.5,
      retrievalP95Ms: 48.8,
      retrievals: 10,
      degradedRate: 0.2,
      captureBacklog: 3,
    });
    expect(result.escalations).toEqual([{ label: "cloud:complexity", count: 2 }]);
    expect(result.degraded).toEqual([
      { label: "embedding_unavailable", count: 1 },
      { label: "opensearch_timeout", count: 1 },
    ]);
  });

  it("reads a counter that fell as a restart from zero", () => {
    const after = {
      at: 60_000,
      cortex: [...retrieve([1, 0, 0, 0, 0])],
      gateway: [counter(metricNames.escalations, { decision: "cloud:complexity" }, 1)],
    };
    const result = interval(before, after);
    expect(result.reading.retrievals).toBe(1);
    expect(result.escalations).toEqual([{ label: "cloud:complexity", count: 1 }]);
  });

  it("leaves a component's part empty when either scrape of it is missing", () => {
    const result = interval(before, { at: 60_000, cortex: retrieve([5, 5, 0, 0, 0]) });
    expect(result.reading).toMatchObject({
      retrievals: 0,
      retrievalP50Ms: null,
      degradedRate: null,
      captureBacklog: null,
    });
    expect(result.escalations).toEqual([]);
  });
});

describe("sumCounts", () => {
  it("adds the counts of each label and sorts by count", () => {
    expect(
      sumCounts([
        [{ label: "a", count: 1 }],
        [
          { label: "b", count: 1 },
          { label: "a", count: 2 },
        ],
      ]),
    ).toEqual([
      { label: "a", count: 3 },
      { label: "b", count: 1 },
    ]);
  });
});
