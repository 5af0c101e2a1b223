/**
 * `kubectl remram version`: the plugin's build (version and commit, fixed by the bundler; "source" when run from
 * a checkout), the Kubernetes version, and each remram operator Deployment's version (its image tag). Pure.
 */

declare const __KUBECTL_REMRAM_VERSION__: string | undefined;
declare const __KUBECTL_REMRAM_COMMIT__: string | undefined;
declare const __KUBECTL_REMRAM_FLAVOR__: string | undefined;

export interface BuildInfo {
  version: string;
  commit?: string;
  /** "npm" (the bundle on a Node), "sea" (a single executable with its own Node), "source" (tsx/tsc output). */
  flavor: string;
}

/** What the bundler defined (kubectl-remram/src/bundle.ts), else a run from source. */
export const buildInfo: BuildInfo = {
  version: typeof __KUBECTL_REMRAM_VERSION__ === "string" ? __KUBECTL_REMRAM_VERSION__ : "source",
  ...(typeof __KUBECTL_REMRAM_COMMIT__ === "string" && __KUBECTL_REMRAM_COMMIT__ !== ""
    ? { commit: __KUBECTL_REMRAM_COMMIT__ }
    : {}),
  flavor: typeof __KUBECTL_REMRAM_FLAVOR__ === "string" ? __KUBECTL_REMRAM_FLAVOR__ : "source",
};

/** The label the chart puts on the operator's Deployment. */
export const operatorSelector = "app.kubernetes.io/name=remram-operator";

export interface OperatorDeployment {
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: { replicas?: number; template?: { spec?: { containers?: { name: string; image?: string }[] } } };
  status?: { readyReplicas?: number };
}

/** The image of the chart's `operator` container (the first container otherwise). */
function operatorImage(deployment: OperatorDeployment): string | undefined {
  const containers = deployment.spec?.template?.spec?.containers ?? [];
  return (containers.find((container) => container.name === "operator") ?? containers[0])?.image;
}

/** The operator's version: its image's tag (or digest), else the chart label's version. */
export function operatorVersion(deployment: OperatorDeployment): string {
  const image = operatorImage(deployment);
  if (image !== undefined) {
    const digest = image.indexOf("@");
    if (digest !== -1) return image.slice(digest + 1, digest + 1 + "sha256:".length + 12);
    const tag = image.lastIndexOf(":");
    if (tag > image.lastIndexOf("/")) return image.slice(tag + 1);
  }
  const chart = deployment.metadata.labels?.["helm.sh/chart"];
  return chart?.replace(/^remram-operator-/, "") ?? "unknown";
}

export interface ServerFacts {
  kubernetes?: string;
  /** The operator Deployments, or why they could not be listed. */
  operators: OperatorDeployment[] | { error: string };
}

/** The first line: the plugin's own version, needing no cluster. */
export function formatClientVersion(build: BuildInfo, nodeVersion: string): string {
  const runtime = build.flavor === "sea" ? `built-in node ${nodeVersion}` : `node ${nodeVersion}`;
  const details = [...(build.commit ? [`commit ${build.commit}`] : []), runtime];
  return `Client: kubectl-remram ${build.version} (${details.join(", ")})`;
}

/** The lines after it: the cluster's version and each operator's. */
export function formatServerVersion(server: ServerFacts): string {
  const lines = server.kubernetes !== undefined ? [`Kubernetes: ${server.kubernetes}`] : [];
  if ("error" in server.operators)
    return [...lines, `Operator: unknown (${server.operators.error})`].join("\n");
  if (server.operators.length === 0)
    return [...lines, `Operator: not found (no Deployment labelled ${operatorSelector})`].join("\n");
  for (const deployment of server.operators) {
    const { name, namespace } = deployment.metadata;
    const image = operatorImage(deployment);
    const ready = `${deployment.status?.readyReplicas ?? 0}/${deployment.spec?.replicas ?? 1} ready`;
    lines.push(
      `Operator: ${operatorVersion(deployment)} (${namespace ?? "?"}/${name}${image ? `, image ${image}` : ""}, ${ready})`,
    );
  }
  return lines.join("\n");
}
