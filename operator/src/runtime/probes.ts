/**
 * /healthz (the event loop answers), /readyz (every named check passes: caches synced, API reachable, CRDs at the
 * expected revision) and /metrics, on plain HTTP ports the chart restricts with a NetworkPolicy.
 */
import { createServer, type Server } from "node:http";
import type { Registry } from "prom-client";

export type ReadinessCheck = () => Promise<string | undefined> | string | undefined;

export interface ProbeServerOptions {
  port: number;
  host?: string;
  readiness: Record<string, ReadinessCheck>;
  registry?: Registry;
}

export function startProbeServer(options: ProbeServerOptions): Promise<Server> {
  const server = createServer((request, response) => {
    const path = (request.url ?? "/").split("?")[0];
    const reply = (status: number, body: string, contentType = "text/plain; charset=utf-8"): void => {
      response.writeHead(status, { "Content-Type": contentType });
      response.end(body);
    };
    if (path === "/healthz" || path === "/livez") {
      reply(200, "ok");
    } else if (path === "/readyz") {
      void failingChecks(options.readiness).then((failing) =>
        failing.length === 0 ? reply(200, "ok") : reply(503, failing.join("\n")),
      );
    } else if (path === "/metrics" && options.registry) {
      const registry = options.registry;
      void registry.metrics().then((text) => reply(200, text, registry.contentType));
    } else {
      reply(404, "not found");
    }
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "0.0.0.0", () => resolve(server));
  });
}

async function failingChecks(checks: Record<string, ReadinessCheck>): Promise<string[]> {
  const results = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      try {
        const problem = await check();
        return problem === undefined ? undefined : `${name}: ${problem}`;
      } catch (error) {
        return `${name}: ${error instanceof Error ? error.message : String(error)}`;
      }
    }),
  );
  return results.filter((problem): problem is string => problem !== undefined);
}
