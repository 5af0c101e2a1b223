import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const chart = join(import.meta.dirname, "../../../charts/remram-operator");

interface Dashboard {
  uid?: string;
  templating?: { list?: { name: string; type: string }[] };
  panels?: { datasource?: { uid?: string }; targets?: { expr?: string }[] }[];
  __inputs?: unknown;
}

describe("the chart's Grafana dashboards", () => {
  const dashboards = readdirSync(join(chart, "dashboards"))
    .filter((file) => file.endsWith(".json"))
    .map(
      (file) =>
        [file, JSON.parse(readFileSync(join(chart, "dashboards", file), "utf8")) as Dashboard] as const,
    );

  it.each(dashboards)(
    "%s has a stable uid, a datasource variable and no exported __inputs",
    (_, dashboard) => {
      expect(dashboard.uid).toMatch(/^remram-[a-z-]+$/);
      expect(dashboard.__inputs).toBeUndefined();
      expect(dashboard.templating?.list?.find((variable) => variable.type === "datasource")?.name).toBe(
        "datasource",
      );
      for (const panel of dashboard.panels ?? []) {
        // Grafana's own variable syntax, not a JavaScript template.
        expect(panel.datasource?.uid).toBe(["$", "{datasource}"].join(""));
        for (const target of panel.targets ?? []) expect(target.expr).not.toMatch(/namespace="[^$]/);
      }
    },
  );

  it("query only metric names the operator, Cortex and the hooks plugin export", () => {
    const exported = [
      "operator/src/runtime/metrics.ts",
      "cortex/src/metrics.ts",
      "cortex/src/dream/metrics.ts",
      "hooks/src/metrics.ts",
    ]
      .map((file) => readFileSync(join(import.meta.dirname, "../../..", file), "utf8"))
      .join("\n");
    const used = new Set(
      dashboards.flatMap(([, dashboard]) =>
        (dashboard.panels ?? []).flatMap((panel) =>
          (panel.targets ?? []).flatMap((target) => target.expr?.match(/[a-z_]+(?=\{)/g) ?? []),
        ),
      ),
    );
    expect(used.size).toBeGreaterThan(0);
    for (const metric of used) {
      // A histogram's series carry suffixes its definition does not.
      expect(exported, metric).toContain(`"${metric.replace(/_(bucket|count|sum)$/, "")}"`);
    }
  });
});
