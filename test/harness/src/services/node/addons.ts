// What k3s ships as pods (CoreDNS, local-path-provisioner with the default `local-path` StorageClass) and the RBAC
// of the node's host processes, as plain manifests for `kubectl apply`. Pure builders: images and paths in, objects out.
import { nodeNetwork, realNodeLabel, realNodeTaint } from "./config.js";

export interface AddonImages {
  coredns: string;
  localPath: string;
  busybox: string;
}

export type Manifest = Record<string, unknown>;

export const system = "kube-system";
export const onRealNode = {
  nodeSelector: { [realNodeLabel.key]: realNodeLabel.value },
  tolerations: [{ key: realNodeTaint.key, operator: "Exists" }],
};
export const restrictedContainer = {
  allowPrivilegeEscalation: false,
  capabilities: { drop: ["ALL"] },
  readOnlyRootFilesystem: true,
};

export const clusterRole = (name: string, rules: object[]): Manifest => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: { name },
  rules,
});

export const clusterRoleBinding = (name: string, subject: object): Manifest => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRoleBinding",
  metadata: { name },
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
  subjects: [subject],
});

export const serviceAccount = (name: string): Manifest => ({
  apiVersion: "v1",
  kind: "ServiceAccount",
  metadata: { name, namespace: system },
});

/**
 * A one-replica kube-system Deployment on the real node: restricted, non-root, its config from a ConfigMap mounted
 * read-only, its container given as the parts that differ.
 */
function systemDeployment(spec: {
  name: string;
  labels: Record<string, string>;
  serviceAccountName: string;
  priorityClassName: string;
  configMap: string;
  mountPath: string;
  container: Record<string, unknown>;
}): Manifest {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: spec.name, namespace: system, labels: spec.labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: spec.labels },
      template: {
        metadata: { labels: spec.labels },
        spec: {
          ...onRealNode,
          serviceAccountName: spec.serviceAccountName,
          priorityClassName: spec.priorityClassName,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: 65532,
            seccompProfile: { type: "RuntimeDefault" },
          },
          containers: [
            {
              name: spec.name,
              imagePullPolicy: "Never",
              ...spec.container,
              securityContext: restrictedContainer,
              volumeMounts: [{ name: "config", mountPath: spec.mountPath, readOnly: true }],
            },
          ],
          volumes: [{ name: "config", configMap: { name: spec.configMap } }],
        },
      },
    },
  };
}

/** kube-router's firewall reads pods, namespaces, nodes, policies, services and endpoints; nothing more. */
export function kubeRouterRbac(user: string): Manifest[] {
  return [
    clusterRole("remram:kube-router", [
      {
        apiGroups: [""],
        resources: ["pods", "namespaces", "nodes", "services", "endpoints"],
        verbs: ["get", "list", "watch"],
      },
      { apiGroups: ["networking.k8s.io"], resources: ["networkpolicies"], verbs: ["get", "list", "watch"] },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["get", "list", "watch"] },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
    ]),
    clusterRoleBinding("remram:kube-router", {
      apiGroup: "rbac.authorization.k8s.io",
      kind: "User",
      name: user,
    }),
  ];
}

/** CoreDNS serving cluster.local only: the host's resolver is not reachable (and not ours), so no forward. */
export function corednsManifests(image: string): Manifest[] {
  const corefile = `.:5353 {
    errors
    health :8080
    ready :8181
    kubernetes ${nodeNetwork.clusterDomain} in-addr.arpa ip6.arpa {
      pods insecure
      fallthrough in-addr.arpa ip6.arpa
      ttl 30
    }
    cache 30
    reload
}
`;
  const labels = { "k8s-app": "kube-dns" };
  return [
    serviceAccount("coredns"),
    clusterRole("system:coredns", [
      {
        apiGroups: [""],
        resources: ["endpoints", "services", "pods", "namespaces"],
        verbs: ["list", "watch"],
      },
      { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] },
    ]),
    clusterRoleBinding("system:coredns", { kind: "ServiceAccount", name: "coredns", namespace: system }),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "coredns", namespace: system },
      data: { Corefile: corefile },
    },
    // Port 5353 behind the Service's 53: no capability needed, so the pod is restricted.
    systemDeployment({
      name: "coredns",
      labels,
      serviceAccountName: "coredns",
      priorityClassName: "system-cluster-critical",
      configMap: "coredns",
      mountPath: "/etc/coredns",
      container: {
        image,
        args: ["-conf", "/etc/coredns/Corefile"],
        ports: [
          { name: "dns", containerPort: 5353, protocol: "UDP" },
          { name: "dns-tcp", containerPort: 5353, protocol: "TCP" },
        ],
        readinessProbe: { httpGet: { path: "/ready", port: 8181 }, periodSeconds: 2 },
        livenessProbe: { httpGet: { path: "/health", port: 8080 }, periodSeconds: 10 },
        resources: { requests: { cpu: "50m", memory: "32Mi" }, limits: { memory: "128Mi" } },
      },
    }),
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { name: "kube-dns", namespace: system, labels },
      spec: {
        selector: labels,
        clusterIP: nodeNetwork.clusterDns,
        ports: [
          { name: "dns", port: 53, targetPort: 5353, protocol: "UDP" },
          { name: "dns-tcp", port: 53, targetPort: 5353, protocol: "TCP" },
        ],
      },
    },
  ];
}

/** local-path-provisioner and the default `local-path` StorageClass, as k3s installs them. */
export function localPathManifests(
  images: Pick<AddonImages, "localPath" | "busybox">,
  hostDir: string,
): Manifest[] {
  const name = "local-path-provisioner";
  const labels = { app: name };
  const helperPod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "helper-pod" },
    spec: {
      tolerations: [{ key: realNodeTaint.key, operator: "Exists" }],
      containers: [{ name: "helper-pod", image: images.busybox, imagePullPolicy: "Never" }],
    },
  };
  return [
    serviceAccount(name),
    clusterRole(name, [
      {
        apiGroups: [""],
        resources: ["nodes", "persistentvolumeclaims", "configmaps"],
        verbs: ["get", "list", "watch"],
      },
      { apiGroups: [""], resources: ["pods"], verbs: ["get", "list", "watch", "create", "delete"] },
      { apiGroups: [""], resources: ["pods/log"], verbs: ["get"] },
      {
        apiGroups: [""],
        resources: ["endpoints"],
        verbs: ["get", "list", "watch", "create", "patch", "update"],
      },
      {
        apiGroups: [""],
        resources: ["persistentvolumes"],
        verbs: ["get", "list", "watch", "create", "patch", "update", "delete"],
      },
      { apiGroups: [""], resources: ["events"], verbs: ["create", "patch"] },
      { apiGroups: ["storage.k8s.io"], resources: ["storageclasses"], verbs: ["get", "list", "watch"] },
      {
        apiGroups: ["coordination.k8s.io"],
        resources: ["leases"],
        verbs: ["get", "list", "watch", "create", "update"],
      },
    ]),
    clusterRoleBinding(name, { kind: "ServiceAccount", name, namespace: system }),
    {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "local-path-config", namespace: system },
      data: {
        "config.json": JSON.stringify({
          nodePathMap: [{ node: "DEFAULT_PATH_FOR_NON_LISTED_NODES", paths: [hostDir] }],
        }),
        setup: '#!/bin/sh\nset -eu\nmkdir -m 0777 -p "$VOL_DIR"\n',
        teardown: '#!/bin/sh\nset -eu\nrm -rf "$VOL_DIR"\n',
        "helperPod.yaml": JSON.stringify(helperPod),
      },
    },
    systemDeployment({
      name,
      labels,
      serviceAccountName: name,
      priorityClassName: "system-node-critical",
      configMap: "local-path-config",
      mountPath: "/etc/config/",
      container: {
        image: images.localPath,
        command: ["local-path-provisioner", "start", "--config", "/etc/config/config.json"],
        env: [
          { name: "POD_NAMESPACE", valueFrom: { fieldRef: { fieldPath: "metadata.namespace" } } },
          { name: "CONFIG_MOUNT_PATH", value: "/etc/config/" },
          // Its helper pods (mkdir/rm of a volume's directory) run as this service account.
          { name: "SERVICE_ACCOUNT_NAME", valueFrom: { fieldRef: { fieldPath: "spec.serviceAccountName" } } },
        ],
        resources: { requests: { cpu: "10m", memory: "32Mi" }, limits: { memory: "128Mi" } },
      },
    }),
    {
      apiVersion: "storage.k8s.io/v1",
      kind: "StorageClass",
      metadata: {
        name: "local-path",
        annotations: { "storageclass.kubernetes.io/is-default-class": "true" },
      },
      provisioner: "rancher.io/local-path",
      volumeBindingMode: "WaitForFirstConsumer",
      reclaimPolicy: "Delete",
    },
  ];
}
