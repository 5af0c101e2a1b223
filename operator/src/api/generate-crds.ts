/**
 * `npm run crds -w operator`: write crds/*.yaml from the zod schemas. With `--check`, write nothing and exit 1 when
 * a committed file differs from what the schemas produce.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
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
const stale: string[] = [];
for (const [relativePath, content] of generatedFiles()) {
  const path = join(repoRoot, relativePath);
  if (readOrEmpty(path) === content) continue;
  stale.push(relativePath);
  if (!checkOnly) {
    mkdirSync(dirname(path), { recursive: true });
    writeFileSync(path, content);
  }
}
if (checkOnly && stale.length > 0) {
  console.error(`out of date (run npm run crds -w operator): ${stale.join(", ")}`);
  process.exitCode = 1;
} else {
  console.log(stale.length === 0 ? "CRDs up to date" : `wrote ${stale.join(", ")}`);
}
