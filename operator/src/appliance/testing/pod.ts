// The pod template of a built workload, as the builders' unit tests read it. Test support only.

export type Pod = {
  runtimeClassName?: string;
  automountServiceAccountToken?: boolean;
  securityContext?: Record<string, unknown>;
  tolerations?: unknown[];
  initContainers?: Container[];
  containers: Container[];
  volumes?: { hostPath?: unknown }[];
};

type Container = {
  name: string;
  env?: { name: string; value?: string }[];
  resources?: { limits?: Record<string, string> };
  securityContext?: Record<string, unknown>;
};

export function podOf(object: unknown): Pod {
  return (object as { spec: { template: { spec: Pod } } }).spec.template.spec;
}
