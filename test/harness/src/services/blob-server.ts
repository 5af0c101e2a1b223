// The model registry's blob server: serves the registry's storage directory read-only over HTTP with Range support,
// for the downloads the registry redirects Ollama to (see model-registry.ts). A process of its own so that it
// outlives a detached `make infra-up` and is stopped by PID like every other test-bed server.
// Runs with Node's type stripping (`node blob-server.ts --root DIR --host HOST --port PORT`): no relative imports.
import { parseArgs } from "node:util";
import fastifyStatic from "@fastify/static";
import Fastify from "fastify";

const { values } = parseArgs({
  options: {
    root: { type: "string" },
    host: { type: "string" },
    port: { type: "string" },
  },
});
if (values.root === undefined || values.host === undefined || values.port === undefined) {
  console.error("usage: blob-server.ts --root DIR --host HOST --port PORT");
  process.exit(2);
}

const server = Fastify({ logger: { level: "info" } });
await server.register(fastifyStatic, {
  root: values.root,
  // Blobs appear after start-up (every push): look each request up on disk instead of a glob taken at start.
  wildcard: true,
  acceptRanges: true,
  index: false,
  list: false,
});
try {
  await server.listen({ host: values.host, port: Number.parseInt(values.port, 10) });
} catch (error) {
  server.log.error(error);
  process.exit(1);
}
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  process.once(signal, () => {
    void server.close().then(() => process.exit(0));
  });
}
