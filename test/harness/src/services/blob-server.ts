// The model registry's blob server: serves the registry's storage directory read-only over HTTP with Range support,
// for the downloads the registry redirects Ollama to (see model-registry.ts). A process of its own so that it
// outlives a detached `make infra-up` and is stopped by PID like every other test-bed server.
// Runs with Node's type stripping (`node blob-server.ts --root DIR --host HOST --port PORT`): no relative imports.
import { pipeline, Readable, Transform, type TransformCallback } from "node:stream";
import { setTimeout as sleep } from "node:timers/promises";
import { parseArgs } from "node:util";
import fastifyStatic from "@fastify/static";
import Fastify from "fastify";

const { values } = parseArgs({
  options: {
    root: { type: "string" },
    host: { type: "string" },
    port: { type: "string" },
    // Pace every download to this many bytes a second (per response), so a pull can be caught mid-way.
    "bytes-per-second": { type: "string" },
  },
});
if (values.root === undefined || values.host === undefined || values.port === undefined) {
  console.error("usage: blob-server.ts --root DIR --host HOST --port PORT [--bytes-per-second N]");
  process.exit(2);
}
const bytesPerSecond =
  values["bytes-per-second"] === undefined ? undefined : Number.parseInt(values["bytes-per-second"], 10);
if (bytesPerSecond !== undefined && !(bytesPerSecond > 0)) {
  console.error(`--bytes-per-second must be a positive integer, not ${values["bytes-per-second"]}`);
  process.exit(2);
}

/** Lets bytes through no faster than `rate` a second since the first one, in slices of at most 64 KiB. */
class Pace extends Transform {
  private readonly rate: number;
  private readonly started = Date.now();
  private sent = 0;

  constructor(rate: number) {
    super();
    this.rate = rate;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, done: TransformCallback): void {
    this.pace(chunk).then(() => done(), done);
  }

  private async pace(chunk: Buffer): Promise<void> {
    for (let offset = 0; offset < chunk.length; offset += 65_536) {
      const slice = chunk.subarray(offset, offset + 65_536);
      this.sent += slice.length;
      const wait = this.started + (this.sent / this.rate) * 1000 - Date.now();
      if (wait > 0) await sleep(wait);
      if (this.destroyed) return;
      this.push(slice);
    }
  }
}

const server = Fastify({ logger: { level: "info" } });
if (bytesPerSecond !== undefined) {
  server.addHook("onSend", async (_request, _reply, payload) => {
    if (!(payload instanceof Readable)) return payload;
    // pipeline: a client that goes away destroys the pace, and the file stream with it.
    return pipeline(payload, new Pace(bytesPerSecond), () => {});
  });
}
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
