/**
 * Who is asking, as Fastify encapsulation: routes registered through `signedIn` run only for a household member
 * whose credential Kubernetes vouches for (identity/identify.ts). The credential comes from the Authorization
 * header (kubectl remram) or the session cookie the sign-in page set (a browser); either way it is the person's own
 * Kubernetes token, and nothing of it is logged.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyRequest } from "fastify";
import { errorBody } from "./errors.js";
import type { Identities, Person } from "./identity/identify.js";

export const sessionCookie = "remram_session";

declare module "fastify" {
  interface FastifyRequest {
    /** The signed-in member; set by the signed-in scope before any of its routes runs. */
    person: Person;
  }
}

function bearerOf(header: string | undefined): string | undefined {
  const match = header === undefined ? null : /^Bearer\s+(\S+)\s*$/i.exec(header.trim());
  return match?.[1];
}

/** The credential a request presents: the Authorization header first, then the session cookie. */
export function credentialOf(request: FastifyRequest): string | undefined {
  return bearerOf(request.headers.authorization) ?? request.cookies[sessionCookie];
}

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Why a request that changes something may not be acted on, or undefined. A browser sends the session cookie with
 * any request to this origin, also one another page starts: SameSite=Strict stops other sites, not another page on
 * the same site (a port-forward's localhost is every local port's site). Such a page can send a body-less POST or a
 * form, never a JSON body without this origin's consent (CORS), so a change must carry a JSON body; and where the
 * browser says where a request comes from (Sec-Fetch-Site), it must come from this origin.
 */
export function crossSiteRefusal(
  method: string,
  headers: { "content-type"?: string | undefined; "sec-fetch-site"?: string | string[] | undefined },
): string | undefined {
  if (safeMethods.has(method)) return undefined;
  const site = headers["sec-fetch-site"];
  if (site !== undefined && site !== "same-origin" && site !== "none")
    return `a change must come from remram-app's own pages (Sec-Fetch-Site: ${String(site)})`;
  if (method !== "DELETE" && !/^application\/json\b/i.test(headers["content-type"] ?? ""))
    return "a change must send a JSON body (Content-Type: application/json)";
  return undefined;
}

export async function signedIn(
  app: FastifyInstance,
  identities: Identities,
  plugins: readonly FastifyPluginAsync[],
  prefix = "",
): Promise<void> {
  await app.register(
    async (scope) => {
      scope.decorateRequest("person", undefined as unknown as Person);
      scope.addHook("onRequest", async (request, reply) => {
        const refusal = crossSiteRefusal(request.method, request.headers);
        if (refusal !== undefined) {
          await reply.code(403).send(errorBody(403, refusal));
          return;
        }
        const token = credentialOf(request);
        if (token === undefined) {
          await reply.code(401).send(errorBody(401, "sign in first: no credential was presented"));
          return;
        }
        const outcome = await identities.identify(token);
        if ("status" in outcome) {
          await reply.code(outcome.status).send(errorBody(outcome.status, outcome.message));
          return;
        }
        request.person = outcome.person;
      });
      for (const plugin of plugins) await scope.register(plugin);
    },
    { prefix },
  );
}
