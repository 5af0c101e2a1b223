/**
 * Cortex process entry (the operator's Deployment runs `node dist/main.js`): load and validate config, serve,
 * and on SIGTERM/SIGINT stop accepting, finish in-flight requests, flush usage counters and exit.
 */
import { dirname, join } from "node:path";
import { buildApp } from "./app.js";
import { ConfigError, loadConfig } from "./config.js";
import { maturationPlugin } from "./maturation.js";

async function main(): Promise<void> {
  let config: ReturnType<typeof loadConfig>;
  try {
    config = loadConfig(process.env);
  } catch (error) {
    if (error instanceof ConfigError) {
      console.error(error.message);
      process.exit(78); // EX_CONFIG
    }
    throw error;
  }
  const { workspaceDir } = config;
  // Reflection, dream, promotion and the archive need the workspace repository; without it Cortex serves the read
  // and ingest paths only.
  const plugins =
    workspaceDir === undefined
      ? []
      : [
          maturationPlugin({
            workspaceDir,
            archiveDir: config.archiveDir ?? join(dirname(workspaceDir), ".remram-archive"),
            gitAuthor: { name: config.gitAuthorName, email: config.gitAuthorEmail },
          }),
        ];
  const app = await buildApp({ config, plugins });
  let stopping = false;
  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    app.log.info({ signal }, "shutting down");
    const force = setTimeout(() => process.exit(1), 20_000);
    force.unref();
    app.close().then(
      () => process.exit(0),
      (error: unknown) => {
        app.log.error({ err: error }, "shutdown failed");
        process.exit(1);
      },
    );
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  await app.listen({ host: config.host, port: config.port });
}

await main();
