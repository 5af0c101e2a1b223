/**
 * Signing in and out of the browser pages, and who the signed-in person is. Sign-in checks the token exactly as
 * every request does and then keeps it in an HttpOnly, SameSite=Strict cookie: page scripts never see it, and no
 * other site's page can make the browser send it. The token stays the person's Kubernetes credential; signing out
 * forgets it here, and `kubectl remram user remove` revokes it everywhere.
 */
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { sessionCookie } from "../auth.js";
import { errorBody } from "../errors.js";
import type { Person } from "../identity/identify.js";

/** A browser session lasts at most this long; a shorter-lived token ends it sooner. */
const sessionSeconds = 12 * 60 * 60;

function me(person: Person) {
  const { memberId, username, householdId, admin } = person;
  return { memberId, username, householdId, admin };
}

export const sessionRoutes: FastifyPluginAsyncZod = async (app) => {
  app.post(
    "/api/session",
    { schema: { body: z.object({ token: z.string().min(1).max(8192) }).strict() } },
    async (request, reply) => {
      const outcome = await app.remram.identities.identify(request.body.token);
      if ("status" in outcome)
        return reply.code(outcome.status).send(errorBody(outcome.status, outcome.message));
      request.log.info({ member: outcome.person.memberId, admin: outcome.person.admin }, "signed in");
      return reply
        .setCookie(sessionCookie, request.body.token, {
          httpOnly: true,
          sameSite: "strict",
          secure: app.remram.config.secureCookies,
          path: app.remram.config.basePath,
          maxAge: sessionSeconds,
        })
        .send(me(outcome.person));
    },
  );
  app.delete("/api/session", async (_request, reply) =>
    reply.clearCookie(sessionCookie, { path: app.remram.config.basePath }).code(204).send(),
  );
};

export const meRoutes: FastifyPluginAsyncZod = async (app) => {
  app.get("/api/me", async (request) => me(request.person));
};
