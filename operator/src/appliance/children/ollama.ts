/** Ollama: its Deployment (on the GPU when the context says so), the models claim and its Service. */
import type { ModelRole } from "../../api/v1alpha1/remram-appliance.js";
import type { KubeObject } from "../../runtime/kube-client.js";
import { gpuResource, runtimeClassNameOf } from "../gpu.js";
import { repairDownloadsContainer } from "../ollama-downloads.js";
import { gatewayAgents } from "../openclaw-config.js";
import {
  type ApplianceContext,
  childClaim,
  childLabels,
  childMeta,
  childName,
  childService,
  ports,
  resourcesOf,
  restrictedContainerSecurity,
  restrictedPodSecurity,
  selectorLabels,
} from "./shared.js";

export function buildOllama(ctx: ApplianceContext): KubeObject[] {
  const profile = ctx.profile.ollama;
  const storage = ctx.spec.ollama.storage ?? { size: profile.storage };
  const resources = resourcesOf(profile.resources);
  const ollamaImage = ctx.spec.ollama.image ?? ctx.images.ollama;
  const gpuPod = ctx.useGpu
    ? {
        runtimeClassName: runtimeClassNameOf(ctx.spec),
        tolerations: [{ key: gpuResource, operator: "Exists", effect: "NoSchedule" }],
      }
    : {};
  const deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: childMeta(ctx, "ollama"),
    spec: {
      replicas: 1,
      // One GPU and a ReadWriteOnce models volume: the old pod must go before the new one starts.
      strategy: { type: "Recreate" },
      selector: { matchLabels: selectorLabels(ctx.name, "ollama") },
      template: {
        metadata: { labels: childLabels(ctx.name, "ollama") },
        spec: {
          automountServiceAccountToken: false,
          securityContext: restrictedPodSecurity(1000),
          ...gpuPod,
          initContainers: [repairDownloadsContainer(ollamaImage, "/models", restrictedContainerSecurity())],
          containers: [
            {
              name: "ollama",
              image: ollamaImage,
              env: [
                { name: "OLLAMA_HOST", value: `0.0.0.0:${ports.ollama}` },
                { name: "OLLAMA_MODELS", value: "/models" },
                { name: "HOME", value: "/tmp" },
              ],
              ports: [{ name: "http", containerPort: ports.ollama }],
              readinessProbe: { httpGet: { path: "/api/version", port: "http" }, periodSeconds: 10 },
              resources: ctx.useGpu
                ? { requests: resources.requests, limits: { ...resources.limits, [gpuResource]: "1" } }
                : resources,
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [
                { name: "models", mountPath: "/models" },
                { name: "tmp", mountPath: "/tmp" },
              ],
            },
          ],
          volumes: [
            { name: "models", persistentVolumeClaim: { claimName: childName(ctx.name, "ollama-models") } },
            { name: "tmp", emptyDir: {} },
          ],
        },
      },
    },
  };
  return [
    childClaim(ctx, "ollama-models", storage.size, storage.storageClassName),
    deployment as unknown as KubeObject,
    childService(ctx, "ollama"),
  ];
}

/** The models of each role: the spec's choice, else the profile's. */
export function requiredModels(ctx: Pick<ApplianceContext, "spec" | "profile">) {
  const chosen = ctx.spec.ollama.models;
  const fallback = ctx.profile.ollama.models;
  return {
    routing: chosen.routing ?? fallback.routing,
    reflection: chosen.reflection ?? fallback.reflection,
    embedding: chosen.embedding ?? fallback.embedding,
  };
}

/**
 * Every model Ollama must hold, by role: the three roles (embedding only where Ollama embeds for Cortex), then each
 * model an agent of spec.gateway.agents names that no role names already (a gateway run on an agent whose model was
 * never pulled fails at its first turn).
 */
export function requiredModelList(
  ctx: Pick<ApplianceContext, "spec" | "profile">,
): { role: ModelRole; name: string }[] {
  const byRole = requiredModels(ctx);
  const ollamaRoles =
    ctx.spec.cortex.embedding.runtime === "ollama"
      ? (["routing", "reflection", "embedding"] as const)
      : (["routing", "reflection"] as const);
  const roles = ollamaRoles.map((role) => ({
    role,
    name: byRole[role],
  }));
  const named = new Set(roles.map((model) => model.name));
  const agentModels = gatewayAgents(ctx.spec.gateway).flatMap((agent) =>
    agent.model !== undefined && !named.has(agent.model) ? [agent.model] : [],
  );
  return [...roles, ...[...new Set(agentModels)].map((name) => ({ role: "agent" as const, name }))];
}
