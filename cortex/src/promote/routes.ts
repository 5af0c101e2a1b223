import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { MaturationIndices } from "../knowledge/records.js";
import type { GitPromoter } from "./git-promoter.js";
import { denyProposal, listProposals, promoteProposal } from "./service.js";

export function promoteRoutes(
  promoter: () => Promise<GitPromoter>,
  indices: () => Promise<MaturationIndices>,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(routes.proposals.url, { schema: routes.proposals.schema }, async (request) => ({
      proposals: await listProposals(app.cortex, await indices(), request.query.status),
    }));
    app.post(routes.promote.url, { schema: routes.promote.schema }, async (request) =>
      promoteProposal(app.cortex, await indices(), promoter, request.body),
    );
    app.post(routes.deny.url, { schema: routes.deny.schema }, async (request) =>
      denyProposal(app.cortex, await indices(), request.params.id, request.body),
    );
  };
}
