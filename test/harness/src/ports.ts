import { createServer } from "node:net";

/** A TCP port on 127.0.0.1 that was free a moment ago (bind :0, read it back, close). */
export function freePort(): Promise<number> {
  return new Promise((resolvePort, reject) => {
    const server = createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
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
