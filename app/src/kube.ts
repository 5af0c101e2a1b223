/**
 * The app's two ways to the Kubernetes API: its own identity (reading its appliance, nothing else)
 * and a signed-in person's (everything done for them: proposals, approvals, their own access reviews). A person's
 * requests carry their token, so RBAC and the admission policy judge the person, never the app.
 */
import { KubeConfig } from "@kubernetes/client-node";
import { KubeClient } from "@remram/operator/kube-client";

export const appFieldManager = "remram-app";

/** The app's own kubeconfig: a file when named, else the pod's ServiceAccount. */
export function ownKubeConfig(path: string | undefined): KubeConfig {
  const config = new KubeConfig();
  if (path === undefined) config.loadFromCluster();
  else config.loadFromFile(path);
  return config;
}

/** A client for the same cluster acting with `token` alone (no client certificate, no other credential). */
export function personClient(own: KubeConfig, token: string): KubeClient {
  const cluster = own.getCurrentCluster();
  if (cluster === null) throw new Error("the app's kubeconfig has no current cluster");
  const config = new KubeConfig();
  config.loadFromOptions({
    clusters: [cluster],
    users: [{ name: "person", token }],
    contexts: [{ name: "person", cluster: cluster.name, user: "person" }],
    currentContext: "person",
  });
  return new KubeClient(config, { fieldManager: appFieldManager, timeoutMs: 15_000 });
}
