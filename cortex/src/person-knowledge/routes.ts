/**
 * "My memory" for remram-app: POST /person/knowledge (list, search), /person/knowledge/correct and
 * /person/knowledge/forget. Who may act for whom is core/person-knowledge.ts authorityOf; each request is logged
 * with who asked, for whom and counts, never statements or the words searched for.
 */
import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import type { Acting, Action } from "../core/person-knowledge.js";
import { authorityOf } from "../core/person-knowledge.js";
import { forbidden } from "../http-errors.js";
import type { HistoryEraser } from "../knowledge/artifact-chunks.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { correctKnowledge } from "./correct.js";
import { type ForgetStores, forgetKnowledge } from "./forget.js";
import { listPersonKnowledge } from "./list.js";

/** The caller's authority for the action, or 403. */
function authorised(action: Action, acting: Acting): { admin: boolean } {
  const authority = authorityOf(action, acting);
  if (!authority.ok) throw forbidden(authority.message);
  return authority;
}

export function personKnowledgeRoutes(
  indices: () => Promise<MaturationIndices>,
  history?: HistoryEraser,
  afterForgotten?: ForgetStores["afterForgotten"],
): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(routes.personKnowledge.url, routeOptions(routes.personKnowledge), async (request) => {
      const { userId, requestedBy, asAdmin, query, cursor } = request.body;
      const { caller } = request;
      authorised("list", { caller, userId, requestedBy, asAdmin });
      const listed = await listPersonKnowledge(app.cortex, request.body);
      request.log.info(
        {
          userId,
          requestedBy,
          caller,
          asAdmin,
          searched: query !== undefined,
          paged: cursor !== undefined,
          returned: listed.items.length,
          total: listed.total,
        },
        "person knowledge listed",
      );
      return listed;
    });

    app.post(
      routes.personKnowledgeCorrect.url,
      routeOptions(routes.personKnowledgeCorrect),
      async (request) => {
        const { userId, requestedBy, id } = request.body;
        const { caller } = request;
        authorised("correct", { caller, userId, requestedBy });
        const correction = await correctKnowledge(app.cortex, await indices(), request.body, caller);
        request.log.info(
          {
            userId,
            requestedBy,
            caller,
            invalidated: id,
            created: correction.answer.created.id,
            replayed: correction.replayed,
            embedded: correction.embedded,
          },
          "person knowledge corrected",
        );
        return correction.answer;
      },
    );

    app.post(
      routes.personKnowledgeForget.url,
      routeOptions(routes.personKnowledgeForget),
      async (request) => {
        const { userId, requestedBy, asAdmin, ids } = request.body;
        const { caller } = request;
        const { admin } = authorised("forget", { caller, userId, requestedBy, asAdmin });
        const outcome = await forgetKnowledge(
          app.cortex,
          { indices: await indices(), history, afterForgotten },
          request.body,
          caller,
          admin,
        );
        const { auditId, forgotten, alreadyForgotten, counts, durationMs } = outcome;
        request.log.warn(
          {
            auditId,
            userId,
            requestedBy,
            caller,
            asAdmin,
            asked: ids.length,
            forgotten,
            alreadyForgotten,
            counts,
            durationMs,
          },
          "person knowledge forgotten",
        );
        return outcome;
      },
    );
  };
}
