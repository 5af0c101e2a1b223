/** Status goes through /status, and only when it differs from what the object already reports (idle = no writes). */
import { isSubset } from "./apply.js";
import type { KubeClient, KubeObject } from "./kube-client.js";

export async function applyStatusIfChanged(
  client: KubeClient,
  object: KubeObject & { status?: unknown },
  status: object,
): Promise<boolean> {
  const current = object.status ?? {};
  const clean = JSON.parse(JSON.stringify(status)) as object;
  if (isSubset(clean, current) && isSubset(current, clean)) return false;
  await client.applyStatus({
    apiVersion: object.apiVersion,
    kind: object.kind,
    metadata: { name: object.metadata.name, namespace: object.metadata.namespace },
    status: clean,
  } as KubeObject);
  return true;
}

/** Condition timestamps have second precision (metav1.Time). */
export function conditionTime(nowMs: number): string {
  return new Date(Math.floor(nowMs / 1000) * 1000).toISOString().replace(".000Z", "Z");
}
