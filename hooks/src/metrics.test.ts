import { describe, expect, it } from "vitest";
import { emptyCounters, increment, observe, renderPrometheus } from "./metrics.js";

describe("renderPrometheus", () => {
  it("renders counters, labelled counters and queue gauges in the text format", () => {
    const counters = emptyCounters();
    counters.injections = 3;
    increment(counters.escalations, "cloud:complexity");
    increment(counters.escalations, "local:default_local", 2);
    increment(counters.queueDrops, 'capture "full"');
    const text = renderPrometheus(counters, {
      captureQueueDepth: 7,
      reflectionQueueDepth: 1,
      reflectQueueDepth: 0,
    });
    expect(text).toContain("# TYPE remram_hooks_injections_total counter\nremram_hooks_injections_total 3\n");
    expect(text).toContain('remram_hooks_escalations_total{decision="cloud:complexity"} 1');
    expect(text).toContain('remram_hooks_escalations_total{decision="local:default_local"} 2');
    expect(text).toContain('remram_hooks_queue_drops_total{reason="capture \\"full\\""} 1');
    expect(text).toContain('remram_hooks_queue_depth{queue="capture"} 7');
    expect(text.endsWith("\n")).toBe(true);
  });

  it("renders the retrieve latency as a cumulative histogram", () => {
    const counters = emptyCounters();
    observe(counters.retrieveLatency, 0.02);
    observe(counters.retrieveLatency, 0.3);
    const text = renderPrometheus(counters, {
      captureQueueDepth: 0,
      reflectionQueueDepth: 0,
      reflectQueueDepth: 0,
    });
    expect(text).toContain('remram_hooks_retrieve_duration_seconds_bucket{le="0.01"} 0');
    expect(text).toContain('remram_hooks_retrieve_duration_seconds_bucket{le="0.025"} 1');
    expect(text).toContain('remram_hooks_retrieve_duration_seconds_bucket{le="0.5"} 2');
    expect(text).toContain('remram_hooks_retrieve_duration_seconds_bucket{le="+Inf"} 2');
    expect(text).toContain("remram_hooks_retrieve_duration_seconds_count 2");
  });
});
