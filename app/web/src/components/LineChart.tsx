/**
 * Values over time as lines in an inline SVG (no chart library), on one scale from zero; the figure's caption and the
 * SVG's accessible name say the numbers a person would read off it (now, highest).
 */
import { type LineSeries, lineLayout } from "../plot.js";

export function LineChart({
  title,
  unit,
  series,
  from,
  to,
}: {
  title: string;
  /** Shown after each number: " ms", " %", " items". */
  unit: string;
  series: readonly LineSeries[];
  from: string;
  to: string;
}) {
  const layout = lineLayout(series, { width: 360, height: 120 });
  const number = (value: number) => `${Number(value.toFixed(1))}${unit}`;
  const facts = series.map((line) => {
    const values = line.values.filter((value): value is number => value !== null);
    const last = values.at(-1);
    return last === undefined
      ? `${line.name}: no data`
      : `${line.name}: now ${number(last)}, highest ${number(Math.max(...values))}`;
  });
  const summary = `${title}, ${from} to ${to}. ${facts.join("; ")}.`;
  return (
    <figure class="line-chart">
      <svg
        role="img"
        aria-label={summary}
        // Room left of the plot for the top value's label ("1000 ms", "200 items").
        viewBox={`-64 -8 ${layout.width + 72} ${layout.height + 28}`}
        width={layout.width + 72}
        height={layout.height + 28}
      >
        <line class="axis" x1={0} y1={layout.height} x2={layout.width} y2={layout.height} />
        <line class="grid" x1={0} y1={0} x2={layout.width} y2={0} />
        <text x={-6} y={0} text-anchor="end" dominant-baseline="middle">
          {number(layout.top)}
        </text>
        <text x={-6} y={layout.height} text-anchor="end" dominant-baseline="middle">
          0
        </text>
        <text x={0} y={layout.height + 16}>
          {from}
        </text>
        <text x={layout.width} y={layout.height + 16} text-anchor="end">
          {to}
        </text>
        {layout.paths.map((path, index) => (
          <path key={path.name} class={`line line-${index}`} d={path.d} />
        ))}
      </svg>
      <figcaption>
        <strong>{title}</strong>
        {series.length > 1 ? (
          <span class="legend">
            {series.map((line, index) => (
              <span key={line.name} class={`key key-${index}`}>
                {line.name}
              </span>
            ))}
          </span>
        ) : null}
        <br />
        {facts.join("; ")}
      </figcaption>
    </figure>
  );
}
