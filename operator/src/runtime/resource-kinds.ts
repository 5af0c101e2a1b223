/** The kinds the operator's controllers reconcile, own or watch, by group/version/kind. */
import { group, version } from "../api/v1alpha1/common.js";
import type { GroupVersionKind } from "./kube-client.js";

const remram = (kind: string): GroupVersionKind => ({ apiVersion: `${group}/${version}`, kind });

export const remramAppliances = remram("RemramAppliance");
export const dreamSchedules = remram("DreamSchedule");
export const dimensionPolicies = remram("DimensionPolicy");
export const artifactProposals = remram("ArtifactProposal");
export const remramKinds: readonly GroupVersionKind[] = [
  remramAppliances,
  dreamSchedules,
  dimensionPolicies,
  artifactProposals,
];

export const deployments: GroupVersionKind = { apiVersion: "apps/v1", kind: "Deployment" };
export const statefulSets: GroupVersionKind = { apiVersion: "apps/v1", kind: "StatefulSet" };
export const services: GroupVersionKind = { apiVersion: "v1", kind: "Service" };
export const secrets: GroupVersionKind = { apiVersion: "v1", kind: "Secret" };
export const persistentVolumeClaims: GroupVersionKind = { apiVersion: "v1", kind: "PersistentVolumeClaim" };
export const networkPolicies: GroupVersionKind = {
  apiVersion: "networking.k8s.io/v1",
  kind: "NetworkPolicy",
};
export const ingresses: GroupVersionKind = { apiVersion: "networking.k8s.io/v1", kind: "Ingress" };
export const serviceAccounts: GroupVersionKind = { apiVersion: "v1", kind: "ServiceAccount" };
export const roles: GroupVersionKind = { apiVersion: "rbac.authorization.k8s.io/v1", kind: "Role" };
export const roleBindings: GroupVersionKind = {
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "RoleBinding",
};
export const endpointSlices: GroupVersionKind = { apiVersion: "discovery.k8s.io/v1", kind: "EndpointSlice" };
export const pods: GroupVersionKind = { apiVersion: "v1", kind: "Pod" };
export const nodes: GroupVersionKind = { apiVersion: "v1", kind: "Node" };
export const runtimeClasses: GroupVersionKind = { apiVersion: "node.k8s.io/v1", kind: "RuntimeClass" };
