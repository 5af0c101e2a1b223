import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import type { MaturationIndices } from "../knowledge/records.js";
import type { GitPromoter } from "./git-promoter.js";
import { denyProposal, listProposals, promoteProposal } from "./service.js";

export function promoteRoutes(
  promoter: () => Promise<GitPromoter>,
  indices: () => Promise<MaturationIndices>,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(routes.proposals.url, routeOptions(routes.proposals), async (request) => ({
      proposals: await listProposals(app.cortex, await indices(), request.query.status),
    }));
    app.post(routes.promote.url, routeOptions(routes.promote), async (request) =>
      promoteProposal(app.cortex, await indices(), promoter, request.body),
    );
    app.post(routes.deny.url, routeOptions(routes.deny), async (request) =>
      denyProposal(app.cortex, await indices(), request.params.id, request.body),
    );
  };
}
