/**
 * "My memory": what Cortex holds about the signed-in person and their household, searched, corrected, forgotten,
 * and their archived conversations. Every call names the person as Cortex's `requestedBy`; Cortex's policy gate
 * decides what they see. Another member's knowledge is asked for only by a household admin (`asAdmin`, which the
 * app sets from Kubernetes' answer, never from the request).
 */
import { lifecycleStatuses } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { routes } from "../cortex-client.js";
import { AppError } from "../errors.js";
import { subject } from "../identity/subject.js";

const memberId = z.string().min(1).max(63);

const commaList = <T extends string>(values: readonly [T, ...T[]]) =>
  z
    .string()
    .transform((text) => [...new Set(text.split(",").filter((part) => part !== ""))])
    .pipe(z.array(z.enum(values)).min(1));

export const knowledgeRoutes: FastifyPluginAsyncZod = async (app) => {
  const { cortex, config } = app.remram;

  app.get(
    "/api/knowledge",
    {
      schema: {
        querystring: z
          .object({
            user: memberId.optional(),
            q: z.string().min(1).max(512).optional(),
            status: commaList(lifecycleStatuses).optional(),
            scope: commaList(["user", "household"] as const).optional(),
            limit: z.coerce.number().int().min(1).max(200).default(50),
            cursor: z.string().min(1).max(1024).optional(),
          })
          .strict(),
      },
    },
    async (request) => {
      const { user, q, status, scope, limit, cursor } = request.query;
      return cortex.call(routes.personKnowledge, {
        ...subject(request.person, user),
        requestedBy: request.person.memberId,
        limit,
        ...(q !== undefined && { query: q }),
        ...(status !== undefined && { status }),
        ...(scope !== undefined && { scopes: scope }),
        ...(cursor !== undefined && { cursor }),
      });
    },
  );

  app.post(
    "/api/knowledge/:id/correct",
    {
      schema: {
        params: z.object({ id: z.string().min(1).max(128) }),
        body: z
          .object({ statement: z.string().trim().min(1).max(4000), reason: z.string().max(1024).optional() })
          .strict(),
      },
    },
    async (request) => {
      const { memberId: me } = request.person;
      const corrected = await cortex.call(routes.personKnowledgeCorrect, {
        userId: me,
        requestedBy: me,
        id: request.params.id,
        ...request.body,
      });
      request.log.info({ member: me, invalidated: request.params.id }, "knowledge corrected");
      return corrected;
    },
  );

  app.post(
    "/api/knowledge/forget",
    {
      schema: {
        body: z
          .object({
            ids: z.array(z.string().min(1).max(128)).min(1).max(100),
            reason: z.string().min(1).max(1024).optional(),
            user: memberId.optional(),
          })
          .strict(),
      },
    },
    async (request) => {
      const { ids, reason, user } = request.body;
      const { memberId: me } = request.person;
      // An admin forgets household knowledge as an admin even when it is their own request.
      const { userId, asAdmin } = subject(request.person, user);
      const forgotten = await cortex.call(routes.personKnowledgeForget, {
        userId,
        asAdmin: asAdmin || request.person.admin,
        requestedBy: me,
        ids,
        reason: reason ?? `forgotten by ${me} in remram-app`,
      });
      request.log.warn({ member: me, user: user ?? me, count: ids.length }, "knowledge forgotten");
      return forgotten;
    },
  );

  app.post(
    "/api/knowledge/forget-all",
    {
      schema: {
        body: z
          .object({
            confirm: memberId.describe(
              "The person's own member id, typed again: forgetting everything is final.",
            ),
            reason: z.string().min(1).max(1024).optional(),
          })
          .strict(),
      },
    },
    async (request) => {
      const { memberId: me } = request.person;
      if (request.body.confirm !== me)
        throw new AppError(400, `to forget everything, confirm with your member id (${me})`);
      return cortex.call(
        routes.erasure,
        {
          userId: me,
          requestedBy: me,
          reason: request.body.reason ?? `${me} forgot everything in remram-app`,
        },
        routes.erasure.url,
        600_000,
      );
    },
  );

  app.post(
    "/api/transcripts/search",
    {
      schema: {
        body: z
          .object({
            query: z.string().min(1).max(1000).optional(),
            limit: z.int().min(1).max(100).default(20),
          })
          .strict(),
      },
    },
    async (request) => {
      const { memberId: userId, householdId } = request.person;
      return cortex.call(routes.archiveSearch, {
        principal: { userId, householdId, agentId: config.agentId },
        ...request.body,
      });
    },
  );

  app.get(
    "/api/transcripts/:hash",
    { schema: { params: z.object({ hash: z.string().regex(/^[a-f0-9]{64}$/, "a SHA-256 hex digest") }) } },
    async (request) => {
      const { memberId: userId, householdId } = request.person;
      const query = new URLSearchParams({ userId, householdId, agentId: config.agentId });
      return cortex.call(routes.archiveRecall, undefined, `/archive/${request.params.hash}?${query}`);
    },
  );
};
