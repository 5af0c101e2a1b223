/**
 * `make bench`: run every bench/*.bench.ts one after another (they share two cores with real servers, so never in
 * parallel). Each benchmark starts what it needs through the test harness and writes its own machine-readable
 * result to bench/results/<name>.json; this runner adds bench/results/index.json with the machine and outcomes.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { cpus, totalmem } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const benchDir = dirname(fileURLToPath(import.meta.url));
const resultsDir = join(benchDir, "results");

interface BenchOutcome {
  name: string;
  exitCode: number;
  seconds: number;
  result: string;
}

const only = process.argv.slice(2);
const files = readdirSync(benchDir)
  .filter((file) => file.endsWith(".bench.ts"))
  .filter((file) => only.length === 0 || only.some((name) => file.startsWith(name)))
  .sort();
if (files.length === 0) {
  console.error(only.length === 0 ? "no bench/*.bench.ts found" : `no benchmark matches ${only.join(", ")}`);
  process.exit(2);
}
mkdirSync(resultsDir, { recursive: true });

const outcomes: BenchOutcome[] = [];
for (const file of files) {
  const name = file.replace(/\.bench\.ts$/, "");
  console.log(`\n=== ${name} ===`);
  const started = process.hrtime.bigint();
  const run = spawnSync("tsx", [join(benchDir, file)], { stdio: "inherit", env: process.env });
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  outcomes.push({
    name,
    exitCode: run.status ?? 1,
    seconds: Math.round(seconds * 10) / 10,
    result: join("bench", "results", `${name}.json`),
  });
}

// A partial run (`tsx bench/run.ts operator`) keeps the other benchmarks' last outcomes in the index.
const indexFile = join(resultsDir, "index.json");
const earlier: BenchOutcome[] = existsSync(indexFile)
  ? ((JSON.parse(readFileSync(indexFile, "utf8")) as { benchmarks?: BenchOutcome[] }).benchmarks ?? [])
  : [];
const merged = [
  ...earlier.filter((outcome) => !outcomes.some((fresh) => fresh.name === outcome.name)),
  ...outcomes,
].sort((a, b) => a.name.localeCompare(b.name));
writeFileSync(
  indexFile,
  `${JSON.stringify(
    {
      finishedAt: new Date().toISOString(),
      machine: {
        cpus: cpus().length,
        cpuModel: cpus()[0]?.model ?? "unknown",
        memoryGiB: Math.round(totalmem() / 2 ** 30),
      },
      node: process.version,
      benchmarks: merged,
    },
    null,
    2,
  )}\n`,
);
const failed = outcomes.filter((outcome) => outcome.exitCode !== 0);
console.log(
  `\n${outcomes.length - failed.length}/${outcomes.length} benchmarks finished; results in bench/results/`,
);
if (failed.length > 0) {
  console.error(`failed: ${failed.map((outcome) => outcome.name).join(", ")}`);
  process.exitCode = 1;
}
