/**
 * Prometheus's text exposition format, read back: the samples of the metrics the diagnostics page plots, from
 * Cortex's and the hooks plugin's /metrics. Written here because the format is a few lines of grammar and the npm
 * parsers for it are unmaintained; comments (# HELP, # TYPE) and timestamps are ignored, as the page needs neither.
 */

export interface MetricSample {
  name: string;
  labels: Readonly<Record<string, string>>;
  value: number;
}

const sampleLine = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+-?\d+)?$/;
const labelPair = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*,?/y;

function unescapeLabel(value: string): string {
  return value.replace(/\\(.)/g, (_match, char: string) => (char === "n" ? "\n" : char));
}

function parseLabels(text: string): Record<string, string> | undefined {
  const labels: Record<string, string> = {};
  labelPair.lastIndex = 0;
  while (labelPair.lastIndex < text.length) {
    const start = labelPair.lastIndex;
    const match = labelPair.exec(text);
    if (match === null) return text.slice(start).trim() === "" ? labels : undefined;
    labels[match[1] as string] = unescapeLabel(match[2] as string);
  }
  return labels;
}

function parseValue(text: string): number {
  if (text === "+Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  return Number(text);
}

/**
 * The samples whose name passes `wanted` (all when not given). A line that is not a sample is skipped, never
 * guessed at: a newer component may add syntax this reader does not know.
 */
export function parseExposition(text: string, wanted?: (name: string) => boolean): MetricSample[] {
  const samples: MetricSample[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = sampleLine.exec(line);
    if (match === null) continue;
    const name = match[1] as string;
    if (wanted !== undefined && !wanted(name)) continue;
    const labels = match[2] === undefined ? {} : parseLabels(match[2]);
    const value = parseValue(match[3] as string);
    if (labels === undefined || Number.isNaN(value)) continue;
    samples.push({ name, labels, value });
  }
  return samples;
}
