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
