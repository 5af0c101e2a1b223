/**
 * Test support: sits between the plugin and the real Cortex and, on demand, misbehaves the ways a broken
 * Cortex can: garbage bodies, 500s, or requests that never get an answer. In "forward" mode it relays to
 * Cortex unchanged, and drops the connection when Cortex itself is down, as a dead Cortex would.
 */
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo, Socket } from "node:net";

export type FaultMode = "forward" | "garbage" | "error500" | "hang";

export interface CortexFaultProxy {
  url: string;
  setMode(mode: FaultMode): void;
  /** Every request the plugin sent, oldest first: path and JSON body (undefined when there was none). */
  readonly requests: readonly { path: string; body: unknown }[];
  stop(): Promise<void>;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

export async function startCortexFaultProxy(upstream: string): Promise<CortexFaultProxy> {
  let mode: FaultMode = "forward";
  const requests: { path: string; body: unknown }[] = [];
  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    void (async () => {
      const body = await readBody(request);
      let parsed: unknown;
      try {
        parsed = body.length > 0 ? JSON.parse(body.toString("utf8")) : undefined;
      } catch {
        parsed = body.toString("utf8");
      }
      requests.push({ path: request.url ?? "/", body: parsed });
      if (mode === "hang") return;
      if (mode === "garbage") {
        response.writeHead(200, { "content-type": "application/json" }).end('{"facts": "not a list", ');
        return;
      }
      if (mode === "error500") {
        response
          .writeHead(500, { "content-type": "application/json" })
          .end('{"statusCode":500,"error":"boom"}');
        return;
      }
      const headers: Record<string, string> = {};
      for (const name of ["authorization", "content-type"]) {
        const value = request.headers[name];
        if (typeof value === "string") headers[name] = value;
      }
      const answer = await fetch(`${upstream}${request.url ?? "/"}`, {
        method: request.method ?? "GET",
        headers,
        ...(body.length > 0 ? { body } : {}),
      });
      response.writeHead(answer.status, {
        "content-type": answer.headers.get("content-type") ?? "application/json",
      });
      response.end(Buffer.from(await answer.arrayBuffer()));
    })().catch(() => request.socket.destroy());
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    setMode(next) {
      mode = next;
    },
    stop: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
