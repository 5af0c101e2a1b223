/**
 * Bearer authentication as Fastify encapsulation: the API's routes are registered inside `authenticated`, whose
 * onRequest hook checks the token; health, readiness, metrics and the API description are registered outside it.
 */
import { createHash, timingSafeEqual } from "node:crypto";
import type { FastifyInstance, FastifyPluginAsync } from "fastify";
import { errorBody } from "./http-errors.js";

function digest(value: string): Buffer {
  return createHash("sha256").update(value).digest();
}

/**
 * Whether an Authorization header carries the token. Both sides are hashed first so the comparison has a fixed
 * length and timingSafeEqual leaks neither the token nor its length.
 */
export function bearerMatches(header: string | undefined, token: string): boolean {
  if (header === undefined) return false;
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  if (match === null || match[1] === undefined) return false;
  return timingSafeEqual(digest(match[1]), digest(token));
}

/** Register `plugins` in a scope where every request must carry `token` (401 otherwise). */
export async function authenticated(
  app: FastifyInstance,
  token: string,
  plugins: readonly FastifyPluginAsync[],
): Promise<void> {
  await app.register(async (scope) => {
    scope.addHook("onRequest", async (request, reply) => {
      if (bearerMatches(request.headers.authorization, token)) return;
      await reply
        .code(401)
        .header("WWW-Authenticate", 'Bearer realm="cortex"')
        .send(errorBody(401, "missing or wrong bearer token", "Unauthorized"));
    });
    for (const plugin of plugins) await scope.register(plugin);
  });
}
