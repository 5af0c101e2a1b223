/**
 * `npm run crds -w operator`: write crds/*.yaml and the chart's copies from the zod schemas, the chart's
 * values.schema.json from its values schema, and the chart's copy of docs/runbooks. With `--check`, write nothing
 * and exit 1 when a committed file differs from what the sources produce.
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { chartFiles, staleChartRunbooks } from "../chart/chart-files.js";
import { generatedFiles } from "./generated-files.js";

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../..");

function readOrEmpty(path: string): string {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return "";
  }
}

const checkOnly = process.argv.includes("--check");
const files = new Map([...generatedFiles(), ...chartFiles(repoRoot)]);
const stale: string[] = [];
for (const [relativePath, content] of files) {
  const path = join(repoRoot, relativePath);
  if (readOrEmpty(path) === content) continue;
  stale.push(relativePath);
  if (!checkOnly) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}
// A runbook removed from docs/runbooks leaves its copy in the chart: remove it too.
for (const relativePath of staleChartRunbooks(repoRoot, files)) {
  stale.push(relativePath);
  if (!checkOnly) rmSync(join(repoRoot, relativePath));
}
if (checkOnly && stale.length > 0) {
  console.error(`out of date (run npm run crds -w operator): ${stale.join(", ")}`);
  process.exitCode = 1;
} else {
  console.log(stale.length === 0 ? "generated files up to date" : `wrote ${stale.join(", ")}`);
}
