import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";

// Two tiers. `unit` needs nothing running and stays fast; `integration` talks to the real
// OpenSearch, kube-apiserver, Ollama and OpenClaw that the harness starts (see test/harness).
export default defineConfig({
  // Tests run on the contract's source, not on a build of it that may be stale.
  resolve: {
    alias: {
      "@remram/contract": fileURLToPath(new URL("contract/src/index.ts", import.meta.url)),
      "@remram/operator/kube-client": fileURLToPath(
        new URL("operator/src/runtime/kube-client.ts", import.meta.url),
      ),
      "@remram/operator/approval": fileURLToPath(new URL("operator/src/api/approval.ts", import.meta.url)),
    },
  },
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: [
            "{contract,cortex,operator,hooks,app,test/harness,kubectl-remram}/src/**/*.test.ts",
            "app/web/src/**/*.test.ts",
            "bench/*.test.ts",
            "hack/release/*.test.ts",
          ],
          exclude: ["**/*.int.test.ts", "**/node_modules/**"],
        },
      },
      {
        test: {
          name: "integration",
          include: [
            "{contract,cortex,operator,hooks,app,test/harness,test/e2e,kubectl-remram}/**/*.int.test.ts",
            "hack/release/*.int.test.ts",
          ],
          exclude: ["**/node_modules/**"],
          // Suites share one machine with real servers; run files one at a time so they do not starve each other.
          fileParallelism: false,
          testTimeout: 120_000,
          hookTimeout: 300_000,
          globalSetup: ["test/harness/src/global-setup.ts"],
        },
      },
    ],
  },
});
