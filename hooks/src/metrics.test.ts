import { describe, expect, it } from "vitest";
import { emptyCounters, increment, renderPrometheus } from "./metrics.js";

describe("renderPrometheus", () => {
  it("renders counters, labelled counters and queue gauges in the text format", () => {
    const counters = emptyCounters();
    counters.injections = 3;
    increment(counters.escalations, "cloud:complexity");
    increment(counters.escalations, "local:default_local", 2);
    increment(counters.queueDrops, 'capture "full"');
    const text = renderPrometheus(counters, { captureQueueDepth: 7, reflectionQueueDepth: 1 });
    expect(text).toContain("# TYPE remram_hooks_injections_total counter\nremram_hooks_injections_total 3\n");
    expect(text).toContain('remram_hooks_escalations_total{decision="cloud:complexity"} 1');
    expect(text).toContain('remram_hooks_escalations_total{decision="local:default_local"} 2');
    expect(text).toContain('remram_hooks_queue_drops_total{reason="capture \\"full\\""} 1');
    expect(text).toContain('remram_hooks_queue_depth{queue="capture"} 7');
    expect(text.endsWith("\n")).toBe(true);
  });
});
