/**
 * A dashboard as a picture from real data: each panel's query results drawn where Grafana would put the panel
 * (its gridPos), with ECharts' server-side SVG renderer and resvg for the PNG. Grafana is not in the registries this
 * project may use; what a person needs to see is the panels filled by real scrapes, not Grafana's chrome.
 */
import { Resvg } from "@resvg/resvg-js";
import * as echarts from "echarts";
import type { PromSeries } from "../../../../test/harness/src/services/prometheus.js";

export interface DashboardPanel {
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  targets: { expr: string; legendFormat?: string }[];
}

export interface DashboardJson {
  title: string;
  panels: DashboardPanel[];
}

/** A panel's series, one list per target, in the order of its targets. */
export type PanelResults = PromSeries[][];

const columnWidth = 60;
const rowHeight = 34;
const header = 48;

/** Grafana's legend templating ({{label}}), or the series' labels when the panel names none. */
export function legendOf(series: PromSeries, legendFormat: string | undefined): string {
  if (legendFormat !== undefined && legendFormat !== "") {
    return legendFormat.replace(/\{\{\s*(\w+)\s*\}\}/g, (_, label: string) => series.metric[label] ?? "");
  }
  const labels = Object.entries(series.metric).map(([key, value]) => `${key}=${value}`);
  return labels.length === 0 ? "value" : labels.join(", ");
}

/** The ECharts option that lays the panels out as the dashboard does (pure). */
export function dashboardOption(
  dashboard: DashboardJson,
  results: readonly PanelResults[],
): echarts.EChartsOption {
  const grids: echarts.GridComponentOption[] = [];
  const xAxes: echarts.XAXisComponentOption[] = [];
  const yAxes: echarts.YAXisComponentOption[] = [];
  const series: echarts.SeriesOption[] = [];
  const legends: echarts.LegendComponentOption[] = [];
  const titles: echarts.TitleComponentOption[] = [
    { text: dashboard.title, left: 12, top: 10, textStyle: { fontSize: 18 } },
  ];
  dashboard.panels.forEach((panel, index) => {
    const left = panel.gridPos.x * columnWidth + 50;
    const top = header + panel.gridPos.y * rowHeight + 44;
    const width = panel.gridPos.w * columnWidth - 80;
    const height = panel.gridPos.h * rowHeight - 84;
    titles.push({
      text: panel.title,
      left: panel.gridPos.x * columnWidth + 12,
      top: header + panel.gridPos.y * rowHeight + 6,
      textStyle: { fontSize: 12 },
    });
    grids.push({ left, top, width, height });
    xAxes.push({
      type: "time",
      gridIndex: index,
      splitNumber: 4,
      axisLabel: { fontSize: 9, hideOverlap: true, formatter: "{HH}:{mm}:{ss}" },
    });
    yAxes.push({ type: "value", gridIndex: index, axisLabel: { fontSize: 9 }, splitNumber: 3 });
    const panelResults = results[index] ?? [];
    panel.targets.forEach((target, targetIndex) => {
      for (const each of panelResults[targetIndex] ?? []) {
        series.push({
          type: "line",
          name: legendOf(each, target.legendFormat),
          xAxisIndex: index,
          yAxisIndex: index,
          showSymbol: false,
          data: each.values.map(([time, value]) => [time * 1000, Number(value)]),
        });
      }
    });
    const names = panel.targets.flatMap((target, targetIndex) =>
      (panelResults[targetIndex] ?? []).map((each) => legendOf(each, target.legendFormat)),
    );
    if (names.length > 0) {
      // Beside the title, right-aligned in the panel: which line is which.
      legends.push({
        data: [...new Set(names)],
        right: (24 - panel.gridPos.x - panel.gridPos.w) * columnWidth + 16,
        top: header + panel.gridPos.y * rowHeight + 22,
        itemWidth: 12,
        itemHeight: 8,
        textStyle: { fontSize: 9 },
      });
    }
    if (panel.targets.every((_, targetIndex) => (panelResults[targetIndex] ?? []).length === 0)) {
      titles.push({
        text: "no data in this run",
        left: left + width / 2 - 50,
        top: top + height / 2 - 8,
        textStyle: { fontSize: 11, color: "#999", fontWeight: "normal" },
      });
    }
  });
  return {
    animation: false,
    backgroundColor: "#fff",
    title: titles,
    legend: legends,
    grid: grids,
    xAxis: xAxes,
    yAxis: yAxes,
    series,
  };
}

/** The dashboard as a PNG, 24 Grafana columns wide. */
export function renderDashboardPng(dashboard: DashboardJson, results: readonly PanelResults[]): Buffer {
  const rows = Math.max(...dashboard.panels.map((panel) => panel.gridPos.y + panel.gridPos.h));
  const chart = echarts.init(null, null, {
    renderer: "svg",
    ssr: true,
    width: 24 * columnWidth,
    height: header + rows * rowHeight + 12,
  });
  try {
    chart.setOption(dashboardOption(dashboard, results));
    const svg = chart.renderToSVGString();
    return new Resvg(svg, {
      background: "white",
      font: { loadSystemFonts: true, defaultFontFamily: "DejaVu Sans" },
    })
      .render()
      .asPng();
  } finally {
    // ECharts keeps a timer per instance; an undisposed one holds the process open.
    chart.dispose();
  }
}
