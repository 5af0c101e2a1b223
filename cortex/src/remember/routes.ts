import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import type { MaturationIndices } from "../knowledge/records.js";
import { type RememberSettings, remember } from "./service.js";

/** POST /remember: an explicit save, stored at once and its page proposed (service.ts). */
export function rememberRoutes(
  indices: () => Promise<MaturationIndices>,
  settings: RememberSettings,
): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(routes.remember.url, routeOptions(routes.remember), async (request) =>
      remember(app.cortex, await indices(), settings, request.body, request.log),
    );
  };
}
