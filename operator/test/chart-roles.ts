/**
 * The chart's ClusterRoles for people (remram-approver, remram-member, remram-household-admin), rendered by Helm
 * from its templates and applied to the test bed's API server under their own names, as `kubectl remram user`
 * binds them. Roles a suite applied because they were missing are deleted again by `remove`.
 */
import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { loadAll } from "js-yaml";
import { binPath, repoRoot } from "../../test/harness/src/paths.js";
import type { KubeClient, KubeObject } from "../src/runtime/kube-client.js";

const run = promisify(execFile);
export const clusterRolesPath = "/apis/rbac.authorization.k8s.io/v1/clusterroles";

/** The ClusterRoles of `templates` (under charts/remram-operator/templates/), as Helm renders them. */
export async function chartRoles(
  templates: readonly string[] = ["approver-role.yaml", "household-roles.yaml"],
): Promise<KubeObject[]> {
  const { stdout } = await run(binPath("helm"), [
    "template",
    "remram",
    join(repoRoot, "charts/remram-operator"),
    ...templates.flatMap((template) => ["--show-only", `templates/${template}`]),
  ]);
  return (loadAll(stdout) as (KubeObject | null)[]).filter((object): object is KubeObject => object !== null);
}

export interface AppliedRoles {
  /** The roles that were not there before this suite applied them. */
  created: string[];
  /** Delete those again. */
  remove(): Promise<void>;
}

/** Server-side apply the chart's ClusterRoles (`fieldManager` names the suite). */
export async function applyChartRoles(
  admin: KubeClient,
  fieldManager: string,
  templates?: readonly string[],
): Promise<AppliedRoles> {
  const created: string[] = [];
  for (const role of await chartRoles(templates)) {
    if ((await admin.get(`${clusterRolesPath}/${role.metadata.name}`)) === undefined)
      created.push(role.metadata.name);
    await admin.send("PATCH", `${clusterRolesPath}/${role.metadata.name}`, {
      query: { fieldManager, force: "true" },
      body: role,
      contentType: "application/apply-patch+yaml",
    });
  }
  return {
    created,
    remove: async () => {
      for (const name of created) await admin.delete(`${clusterRolesPath}/${name}`);
    },
  };
}
