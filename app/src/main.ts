/** remram-app's process: the config from the environment, the server, a clean stop on SIGTERM. */
import { buildApp } from "./app.js";
import { configFromEnv } from "./config.js";

const config = configFromEnv(process.env);
const app = await buildApp({ config });
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    app.close().then(
      () => process.exit(0),
      () => process.exit(1),
    );
  });
}
await app.listen({ host: config.host, port: config.port });
