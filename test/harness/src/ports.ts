import { createServer } from "node:net";

/** A TCP port on `host` that was free a moment ago (bind :0, read it back, close). */
export function freePort(host = "127.0.0.1"): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, host, () => {
      const address = server.address();
      if (address === null || typeof address === "string") {
        server.close();
        reject(new Error("could not read the bound port"));
        return;
      }
      server.close(() => resolvePort(address.port));
    });
  });
}

/** Resolves if `port` on `host` can be bound now; a clear error naming it if something listens there. */
export function assertPortFree(host: string, port: number, what: string): Promise<void> {
  return new Promise((resolveFree, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", (error: NodeJS.ErrnoException) => {
      reject(
        new Error(
          error.code === "EADDRINUSE"
            ? `${what}: port ${port} on ${host} is in use`
            : `${what}: cannot listen on ${host}:${port}: ${error.message}`,
        ),
      );
    });
    server.listen(port, host, () => server.close(() => resolveFree()));
  });
}
