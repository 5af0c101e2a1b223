/** Counts as horizontal bars in an inline SVG (no chart library); its accessible name states every number. */
import { humanize } from "../format.js";
import { barLayout } from "../plot.js";

export function BarChart({
  title,
  counts,
}: {
  title: string;
  counts: readonly (readonly [string, number])[];
}) {
  const layout = barLayout(
    counts.map(([key, value]) => [humanize(key), value] as const),
    { width: 360, labelWidth: 170, valueWidth: 44 },
  );
  const summary = `${title}: ${layout.bars.map((bar) => `${bar.label} ${bar.value}`).join(", ")}`;
  const middle = layout.rowHeight / 2;
  return (
    <svg
      class="bar-chart"
      role="img"
      aria-label={summary}
      viewBox={`0 0 ${layout.width} ${layout.height}`}
      width={layout.width}
      height={layout.height}
    >
      {layout.bars.map((bar) => (
        <g key={bar.label} transform={`translate(0 ${bar.y})`}>
          <text x={layout.x - 8} y={middle} text-anchor="end" dominant-baseline="middle">
            {bar.label}
          </text>
          <rect x={layout.x} y={4} width={bar.length} height={layout.rowHeight - 8} rx={2} />
          <text x={layout.x + bar.length + 6} y={middle} dominant-baseline="middle">
            {bar.value}
          </text>
        </g>
      ))}
    </svg>
  );
}
