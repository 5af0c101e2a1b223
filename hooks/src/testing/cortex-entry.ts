/**
 * Test support: the real Cortex (core routes plus reflection, dream, promotion and archive) as its own
 * process, so a test can kill it and start it again on the same port and indices. Configured by CORTEX_*
 * variables like cortex/src/main.ts, plus REMRAM_TEST_CORTEX_DATA for the maturation folders.
 */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { buildApp } from "../../../cortex/src/app.js";
import { loadConfig } from "../../../cortex/src/config.js";
import { maturationPlugin } from "../../../cortex/src/maturation.js";

const dataDir = process.env.REMRAM_TEST_CORTEX_DATA ?? "/tmp/remram-test-cortex";
for (const folder of ["workspace", "archive"]) mkdirSync(join(dataDir, folder), { recursive: true });
const config = loadConfig(process.env);
const app = await buildApp({
  config,
  plugins: [
    maturationPlugin({
      workspaceDir: join(dataDir, "workspace"),
      archiveDir: join(dataDir, "archive"),
      gitAuthor: { name: "Remram test", email: "test@remram.invalid" },
    }),
  ],
});
const stop = () => void app.close().then(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
await app.listen({ host: config.host, port: config.port });
