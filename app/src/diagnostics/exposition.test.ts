import { describe, expect, it } from "vitest";
import { parseExposition } from "./exposition.js";

const text = `# HELP cortex_http_request_duration_seconds HTTP request latency by route
# TYPE cortex_http_request_duration_seconds histogram
cortex_http_request_duration_seconds_bucket{le="0.005",route="/retrieve",method="POST",status="200"} 3
cortex_http_request_duration_seconds_bucket{le="+Inf",route="/retrieve",method="POST",status="200"} 7
remram_hooks_queue_drops_total{reason="capture \\"full\\", then\\\\ \\nagain"} 1
remram_hooks_queue_depth{queue="capture"} 7 1712345678000
process_start_time_seconds 1.7e9
cortex_summary{quantile="0.5"} NaN
not a sample line
`;

describe("parseExposition", () => {
  it("reads names, labels (with escapes), values and +Inf, and skips comments, NaN and lines it does not know", () => {
    expect(parseExposition(text)).toEqual([
      {
        name: "cortex_http_request_duration_seconds_bucket",
        labels: { le: "0.005", route: "/retrieve", method: "POST", status: "200" },
        value: 3,
      },
      {
        name: "cortex_http_request_duration_seconds_bucket",
        labels: { le: "+Inf", route: "/retrieve", method: "POST", status: "200" },
        value: 7,
      },
      {
        name: "remram_hooks_queue_drops_total",
        labels: { reason: 'capture "full", then\\ \nagain' },
        value: 1,
      },
      { name: "remram_hooks_queue_depth", labels: { queue: "capture" }, value: 7 },
      { name: "process_start_time_seconds", labels: {}, value: 1.7e9 },
    ]);
  });

  it("keeps only the names asked for", () => {
    expect(parseExposition(text, (name) => name === "remram_hooks_queue_depth").map((s) => s.value)).toEqual([
      7,
    ]);
  });

  it("skips a sample whose labels do not parse", () => {
    expect(parseExposition('broken{queue="capture} 1\nok 2')).toEqual([{ name: "ok", labels: {}, value: 2 }]);
  });
});
