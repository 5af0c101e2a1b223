/**
 * The appliance on the real node, as a user on a k3s box gets it: runs the real-node suite
 * (operator/test/appliance-real-node.int.test.ts: `helm install`, `kubectl apply`, a conversation, dream and
 * approval, `helm upgrade`, every fault and restart) once and keeps what it measures: apply → Ready (images present,
 * models pulled from the test bed's registry), the operator's RSS in-cluster, the gateway's first reply after Ready,
 * and each recovery time. Writes bench/results/appliance.json. About 12 minutes; needs root (the real node).
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const benchDir = dirname(fileURLToPath(import.meta.url));
const result = join(benchDir, "results", "appliance.json");
const measuredFile = join(benchDir, "results", "appliance-measured.tmp.json");
rmSync(measuredFile, { force: true });

const started = Date.now();
const suite = spawnSync(
  "vitest",
  ["run", "--project", "integration", "operator/test/appliance-real-node.int.test.ts"],
  {
    cwd: join(benchDir, ".."),
    stdio: "inherit",
    env: {
      ...process.env,
      REMRAM_TESTBED: "node,registry",
      REMRAM_REAL_NODE_FULL: "1",
      REMRAM_APPLIANCE_MEASURED: measuredFile,
    },
  },
);
if (!existsSync(measuredFile)) {
  console.error("the real-node suite wrote no measurements (see its output above)");
  process.exit(1);
}
const measured = JSON.parse(readFileSync(measuredFile, "utf8")) as Record<string, unknown>;
rmSync(measuredFile);
writeFileSync(
  result,
  `${JSON.stringify(
    {
      finishedAt: new Date().toISOString(),
      suitePassed: suite.status === 0,
      suiteSeconds: Math.round((Date.now() - started) / 1000),
      ...measured,
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${result}`);
process.exitCode = suite.status ?? 1;
