/** Geometry of the diagnostics page's small bar chart (an SVG the page draws itself, no chart library). */

export interface Bar {
  label: string;
  value: number;
  /** Top edge of the bar's row. */
  y: number;
  /** Length of the bar, 0 for a zero count, at least 1 for any other. */
  length: number;
}

export interface BarLayout {
  bars: Bar[];
  /** Height of the whole chart. */
  height: number;
  /** Where the bars start (after the labels) and how long the longest one is. */
  x: number;
  span: number;
  width: number;
  rowHeight: number;
}

export interface BarOptions {
  width?: number;
  rowHeight?: number;
  labelWidth?: number;
  /** Room kept right of the longest bar for its number. */
  valueWidth?: number;
}

/** Horizontal bars, one row per count, the longest count filling the span; rows keep the order given. */
export function barLayout(
  entries: readonly (readonly [string, number])[],
  options: BarOptions = {},
): BarLayout {
  const width = options.width ?? 320;
  const rowHeight = options.rowHeight ?? 22;
  const x = options.labelWidth ?? 140;
  const span = Math.max(1, width - x - (options.valueWidth ?? 40));
  const counts = entries.map(([, value]) => (Number.isFinite(value) && value > 0 ? value : 0));
  const max = Math.max(0, ...counts);
  const bars = entries.map(([label], index) => {
    const value = counts[index] ?? 0;
    const length = max === 0 || value === 0 ? 0 : Math.max(1, Math.round((value / max) * span));
    return { label, value, y: index * rowHeight, length };
  });
  return { bars, height: Math.max(rowHeight, entries.length * rowHeight), x, span, width, rowHeight };
}

/** One line of a line chart: a value per point, null where there is none (the line breaks there). */
export interface LineSeries {
  name: string;
  values: readonly (number | null)[];
}

export interface LineLayout {
  width: number;
  height: number;
  /** An SVG path per series, in the order given; empty where a series has no value at all. */
  paths: { name: string; d: string }[];
  /** The value the top edge stands for: a round number at or above every value (1 when all are zero or none). */
  top: number;
}

/** A round number at or above `value`: 1, 2 or 5 times a power of ten. */
export function roundUp(value: number): number {
  if (!(value > 0)) return 1;
  const power = 10 ** Math.floor(Math.log10(value));
  return ([1, 2, 5, 10].find((step) => step * power >= value) ?? 10) * power;
}

/** Lines over evenly spaced points (the readings are taken at a fixed interval), zero at the bottom edge. */
export function lineLayout(
  series: readonly LineSeries[],
  options: { width?: number; height?: number } = {},
): LineLayout {
  const width = options.width ?? 360;
  const height = options.height ?? 120;
  const points = Math.max(0, ...series.map((line) => line.values.length));
  const top = roundUp(Math.max(0, ...series.flatMap((line) => line.values.filter((v) => v !== null))));
  const x = (index: number) => (points <= 1 ? width / 2 : (index / (points - 1)) * width);
  const y = (value: number) => height - (Math.max(0, value) / top) * height;
  const paths = series.map((line) => {
    let d = "";
    let drawing = false;
    line.values.forEach((value, index) => {
      if (value === null || !Number.isFinite(value)) {
        drawing = false;
        return;
      }
      // A segment opens with a zero-length step, which the round line cap draws as a dot when no point follows.
      d += drawing
        ? `L${x(index).toFixed(1)} ${y(value).toFixed(1)} `
        : `M${x(index).toFixed(1)} ${y(value).toFixed(1)} h0 `;
      drawing = true;
    });
    return { name: line.name, d: d.trim() };
  });
  return { width, height, paths, top };
}
