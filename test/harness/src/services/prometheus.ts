// A Prometheus server (hack/install-prometheus.sh) scraping the targets a test names, every second, on a free
// loopback port; the dashboards test runs every panel's query against what it scraped. Targets carry the labels
// the chart's PodMonitors would give them (namespace, pod), since nothing here discovers pods.
import { existsSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { binPath, runDir } from "../paths.js";
import { freePort } from "../ports.js";
import { spawnService } from "../process.js";
import { httpReady, waitFor } from "../wait.js";
import type { Started } from "./types.js";

export interface ScrapeTarget {
  job: string;
  /** host:port */
  address: string;
  metricsPath?: string;
  labels: Record<string, string>;
  /** Rewrites of a label's value after the scrape (Prometheus metric_relabel_configs), e.g. a suffixed lease name. */
  rewrite?: { label: string; from: string; to: string }[];
}

/** prometheus.yml for the targets (pure; JSON, which is YAML). */
export function renderPrometheusConfig(targets: readonly ScrapeTarget[], intervalSeconds: number): string {
  return JSON.stringify(
    {
      global: { scrape_interval: `${intervalSeconds}s`, evaluation_interval: `${intervalSeconds}s` },
      scrape_configs: targets.map((target) => ({
        job_name: target.job,
        metrics_path: target.metricsPath ?? "/metrics",
        static_configs: [{ targets: [target.address], labels: target.labels }],
        ...(target.rewrite === undefined
          ? {}
          : {
              metric_relabel_configs: target.rewrite.map((rule) => ({
                source_labels: [rule.label],
                regex: rule.from.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
                target_label: rule.label,
                replacement: rule.to,
              })),
            }),
      })),
    },
    null,
    2,
  );
}

export interface PrometheusEndpoints {
  url: string;
}

export async function startPrometheus(
  targets: readonly ScrapeTarget[],
  options: { intervalSeconds?: number; timeoutMs?: number } = {},
): Promise<Started<PrometheusEndpoints>> {
  const binary = binPath("prometheus");
  if (!existsSync(binary)) {
    throw new Error(
      `prometheus is not installed at ${binary}: run \`bash hack/install-prometheus.sh\` (or \`make setup\`)`,
    );
  }
  const port = await freePort();
  const dir = join(runDir, `prometheus-${port}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, "prometheus.yml"), renderPrometheusConfig(targets, options.intervalSeconds ?? 1));
  const server = spawnService({
    name: `prometheus-${port}`,
    command: binary,
    args: [
      `--config.file=${join(dir, "prometheus.yml")}`,
      `--storage.tsdb.path=${join(dir, "data")}`,
      `--web.listen-address=127.0.0.1:${port}`,
    ],
    cwd: dir,
  });
  const url = `http://127.0.0.1:${port}`;
  const stop = async (): Promise<void> => {
    await server.stop(5_000);
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitFor(() => httpReady(`${url}/-/ready`), {
      what: `prometheus at ${url}`,
      timeoutMs: options.timeoutMs ?? 30_000,
      abortIf: server.exitReason,
    });
  } catch (error) {
    await stop();
    throw new Error(`${error instanceof Error ? error.message : String(error)}\n${server.logTail(20)}`);
  }
  return { endpoints: { url }, processes: [server], stop };
}

/** One series of a query's answer. */
export interface PromSeries {
  metric: Record<string, string>;
  values: [number, string][];
}

/** A range query (or, without `range`, an instant one as a one-point series); a query Prometheus refuses throws. */
export async function queryPrometheus(
  url: string,
  expr: string,
  range?: { start: number; end: number; stepSeconds: number },
): Promise<PromSeries[]> {
  const params = new URLSearchParams({ query: expr });
  if (range) {
    params.set("start", String(range.start / 1000));
    params.set("end", String(range.end / 1000));
    params.set("step", String(range.stepSeconds));
  }
  const response = await fetch(`${url}/api/v1/${range ? "query_range" : "query"}?${params}`);
  const body = (await response.json()) as {
    status: string;
    error?: string;
    data?: {
      resultType: string;
      result: { metric: Record<string, string>; value?: [number, string]; values?: [number, string][] }[];
    };
  };
  if (body.status !== "success" || body.data === undefined) {
    throw new Error(`prometheus refused ${expr}: ${body.error ?? response.status}`);
  }
  return body.data.result.map((series) => ({
    metric: series.metric,
    values: series.values ?? (series.value ? [series.value] : []),
  }));
}
