import { defineConfig } from "vitest/config";

// Two tiers. `unit` needs nothing running and stays fast; `integration` talks to the real
// OpenSearch, kube-apiserver, Ollama and OpenClaw that the harness starts (see test/harness).
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["{cortex,operator,hooks,test/harness}/src/**/*.test.ts"],
          exclude: ["**/*.int.test.ts", "**/node_modules/**"],
        },
      },
      {
        test: {
          name: "integration",
          include: ["{cortex,operator,hooks,test/harness,test/e2e}/**/*.int.test.ts"],
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
