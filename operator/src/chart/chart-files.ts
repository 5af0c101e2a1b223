/**
 * The chart's files that `npm run crds -w operator` writes beside the CRDs: values.schema.json from the zod schema
 * of the values, and a copy of docs/runbooks, so a packaged chart carries the runbooks its alerts name.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { valuesJsonSchema } from "./values-schema.js";

export const chartDir = "charts/remram-operator";
export const runbooksDir = "docs/runbooks";
export const chartRunbooksDir = `${chartDir}/runbooks`;

const copiedHeader = `<!-- Copied from ${runbooksDir} by \`npm run crds -w operator\`; edit it there. -->\n`;

export const isMarkdown = (name: string): boolean => name.endsWith(".md");

/** Repository-relative path → content; reads docs/runbooks under `repoRoot`. */
export function chartFiles(repoRoot: string): Map<string, string> {
  const files = new Map<string, string>();
  files.set(`${chartDir}/values.schema.json`, `${JSON.stringify(valuesJsonSchema(), null, 2)}\n`);
  for (const name of readdirSync(join(repoRoot, runbooksDir)).filter(isMarkdown).sort()) {
    files.set(
      `${chartRunbooksDir}/${name}`,
      `${copiedHeader}${readFileSync(join(repoRoot, runbooksDir, name), "utf8")}`,
    );
  }
  return files;
}

/** Copies in the chart whose source is gone: the generator deletes them, the drift test reports them. */
export function staleChartRunbooks(repoRoot: string, files: ReadonlyMap<string, string>): string[] {
  let present: string[];
  try {
    present = readdirSync(join(repoRoot, chartRunbooksDir)).filter(isMarkdown);
  } catch {
    return [];
  }
  return present.map((name) => `${chartRunbooksDir}/${name}`).filter((path) => !files.has(path));
}
