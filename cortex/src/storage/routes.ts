import { routes } from "@remram/contract";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { routeOptions } from "../auth.js";
import { readStorage, type VolumeReading } from "./service.js";

/** GET /admin/storage: the room left, for the operator's StorageAvailable condition and `kubectl remram status`. */
export function storageRoutes(volumes: () => Promise<VolumeReading[]>): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(routes.storageStatus.url, routeOptions(routes.storageStatus), async () =>
      readStorage(app.cortex, volumes),
    );
  };
}
