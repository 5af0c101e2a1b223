/**
 * The admin's view of the appliance: its conditions, components and models from the RemramAppliance's status, and
 * each dream schedule's last run, read with the admin's own Kubernetes credential; and the components' metrics over
 * the last day (diagnostics/), from Prometheus or the app's own scrapes.
 */

import { KubeApiError } from "@remram/operator/kube-client";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { AppError } from "../errors.js";

interface Conditioned {
  metadata: { name: string };
  spec?: { applianceRef?: { name: string }; schedule?: string };
  status?: Record<string, unknown>;
}

export const diagnosticsRoutes: FastifyPluginAsyncZod = async (app) => {
  const { namespace, appliance } = app.remram.config;
  const base = `/apis/remram.io/v1alpha1/namespaces/${namespace}`;

  const adminOnly = (person: { admin: boolean; memberId: string }) => {
    if (!person.admin)
      throw new AppError(403, `diagnostics are for household admins; ${person.memberId} is not one`);
  };

  // Apart from the CRs' view: a component whose metrics cannot be read must not hide the conditions.
  app.get("/api/diagnostics/metrics", async (request) => {
    adminOnly(request.person);
    return app.remram.metrics.view();
  });

  app.get("/api/diagnostics", async (request) => {
    const { person } = request;
    adminOnly(person);
    try {
      const [found, schedules] = await Promise.all([
        person.kube.send<Conditioned>("GET", `${base}/remramappliances/${appliance}`),
        person.kube.send<{ items: Conditioned[] }>("GET", `${base}/dreamschedules`),
      ]);
      return {
        appliance: { name: appliance, status: found.status ?? {} },
        dreamSchedules: schedules.items
          .filter((item) => item.spec?.applianceRef?.name === appliance)
          .map((item) => ({
            name: item.metadata.name,
            schedule: item.spec?.schedule,
            status: item.status ?? {},
          })),
      };
    } catch (error) {
      if (error instanceof KubeApiError)
        throw new AppError(
          error.status === 403 ? 403 : 503,
          `reading the appliance as ${person.username}: ${error.message}`,
        );
      throw error;
    }
  });
};
