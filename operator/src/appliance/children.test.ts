import { describe, expect, it } from "vitest";
import type { KubeObject } from "../runtime/kube-client.js";
import {
  type ApplianceContext,
  buildApplianceChildren,
  buildDevicePlugin,
  buildOllama,
  buildOpenSearch,
  keepLiveStorage,
  requiredModelList,
  retrieveTimeoutMs,
} from "./children.js";
import { gpuInventory, type NodeLike, quantityToMiB, selectProfile } from "./hardware-profiles.js";
import { repairInterruptedDownloadsScript } from "./ollama-downloads.js";
import { applianceContext, gatewayConfigFor, images, profiles } from "./testing/context.js";

const context = applianceContext;

type Pod = {
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

function podOf(object: unknown): Pod {
  return (object as { spec: { template: { spec: Pod } } }).spec.template.spec;
}

describe("the appliance's children", () => {
  it("are all in the appliance's namespace with exactly one controller ownerReference, except retained claims", () => {
    const children = buildApplianceChildren(context({}));
    for (const child of children) {
      expect(child.metadata.namespace).toBe("home");
      if (child.kind === "PersistentVolumeClaim") {
        expect(child.metadata.ownerReferences).toBeUndefined();
      } else {
        expect(child.metadata.ownerReferences?.filter((reference) => reference.controller)).toHaveLength(1);
      }
    }
    const deleting = buildApplianceChildren(
      context({ persistentVolumeClaimRetentionPolicy: { whenDeleted: "Delete" } }),
    );
    const claims = deleting.filter((child) => child.kind === "PersistentVolumeClaim");
    expect(claims.length).toBe(2);
    for (const claim of claims) expect(claim.metadata.ownerReferences).toHaveLength(1);
  });

  it("run every pod under the restricted pod security standard without a service account token", () => {
    for (const child of buildApplianceChildren(context({}))) {
      if (child.kind !== "Deployment" && child.kind !== "StatefulSet") continue;
      const pod = podOf(child);
      expect(pod.automountServiceAccountToken, child.metadata.name).toBe(false);
      expect(pod.securityContext).toMatchObject({
        runAsNonRoot: true,
        seccompProfile: { type: "RuntimeDefault" },
      });
      expect(pod.volumes?.some((volume) => volume.hostPath !== undefined) ?? false).toBe(false);
      for (const container of [...(pod.initContainers ?? []), ...pod.containers]) {
        expect(container.securityContext, `${child.metadata.name}/${container.name}`).toMatchObject({
          allowPrivilegeEscalation: false,
          capabilities: { drop: ["ALL"] },
          runAsNonRoot: true,
        });
      }
    }
  });

  it("give Ollama the nvidia runtime class, one GPU and the GPU toleration when the GPU is used", () => {
    const pod = podOf(buildOllama(context({})).find((child) => child.kind === "Deployment"));
    expect(pod.runtimeClassName).toBe("nvidia");
    expect(pod.containers[0]?.resources?.limits?.["nvidia.com/gpu"]).toBe("1");
    expect(pod.tolerations).toEqual([{ key: "nvidia.com/gpu", operator: "Exists", effect: "NoSchedule" }]);
  });

  it("repair Ollama's interrupted downloads before it serves, with its own image over its models volume", () => {
    const pod = podOf(
      buildOllama(context({ ollama: { image: "ollama/ollama:0.24.0" } })).find(
        (child) => child.kind === "Deployment",
      ),
    );
    const [repair] = pod.initContainers ?? [];
    expect(repair).toMatchObject({
      name: "repair-downloads",
      image: "ollama/ollama:0.24.0",
      command: ["sh", "-c", repairInterruptedDownloadsScript],
      env: [{ name: "OLLAMA_MODELS", value: "/models" }],
      volumeMounts: [{ name: "models", mountPath: "/models" }],
    });
  });

  it("leave the GPU out entirely on the CPU fallback", () => {
    const pod = podOf(
      buildOllama(context({}, { useGpu: false })).find((child) => child.kind === "Deployment"),
    );
    expect(pod.runtimeClassName).toBeUndefined();
    expect(pod.tolerations).toBeUndefined();
    expect(pod.containers[0]?.resources?.limits?.["nvidia.com/gpu"]).toBeUndefined();
  });

  it("size the OpenSearch heap at half the profile's memory, single-node, unless the spec sets it", () => {
    const env = (objects: ReturnType<typeof buildOpenSearch>) =>
      podOf(objects.find((child) => child.kind === "StatefulSet")).containers[0]?.env ?? [];
    const defaults = env(buildOpenSearch(context({})));
    expect(defaults).toContainEqual({ name: "OPENSEARCH_JAVA_OPTS", value: "-Xms4096m -Xmx4096m" });
    expect(defaults).toContainEqual({ name: "discovery.type", value: "single-node" });
    const explicit = env(buildOpenSearch(context({ opensearch: { heap: "2Gi" } })));
    expect(explicit).toContainEqual({ name: "OPENSEARCH_JAVA_OPTS", value: "-Xms2048m -Xmx2048m" });
    expect(
      buildOpenSearch(context({ opensearch: { mode: "external", external: { url: "https://os:9200" } } })),
    ).toEqual([]);
  });

  it("seed a gateway config with memory off, Ollama as provider, the hooks plugin, Cortex and token auth on a LAN bind", () => {
    const secret = buildApplianceChildren(context({})).find(
      (child) => child.metadata.name === "box-gateway-config",
    ) as unknown as { data: Record<string, string> };
    const config = JSON.parse(Buffer.from(secret.data["openclaw.json"] as string, "base64").toString("utf8"));
    expect(config.gateway).toMatchObject({ bind: "lan", auth: { mode: "token", token: "gateway-secret" } });
    expect(config.memory.search.enabled).toBe(false);
    expect(config.plugins.slots.memory).toBe("none");
    expect(config.plugins.load.paths).toEqual(["/opt/remram-hooks/plugin"]);
    expect(config.plugins.entries["remram-hooks"]).toMatchObject({
      enabled: true,
      hooks: { allowConversationAccess: true },
      config: {
        cortex: { url: "http://box-cortex.home.svc:8080", tokenFile: "/var/run/secrets/remram/cortex/token" },
        injection: { tokenCeiling: 2048 },
        reflection: { model: { provider: "ollama-reflect", model: "qwen3:14b" } },
      },
      subagent: { allowModelOverride: true, allowedModels: ["ollama-reflect/qwen3:14b"] },
    });
    // Reflection replies are held to the delta's schema; conversation replies are not.
    expect(config.models.providers["ollama-reflect"].models).toEqual([
      expect.objectContaining({
        id: "qwen3:14b",
        params: expect.objectContaining({ format: expect.objectContaining({ type: "object" }) }),
      }),
    ]);
    expect(config.models.providers.ollama.models.map((model: { id: string }) => model.id)).toEqual([
      "qwen3:8b",
    ]);
    expect(config.models.providers.ollama.models[0].params.format).toBeUndefined();
    expect(config.models.providers.ollama).toMatchObject({
      api: "ollama",
      baseUrl: "http://box-ollama:11434",
    });
    expect(config.agents.defaults.model.primary).toBe("ollama/qwen3:8b");
    // A replacement pod takes over OpenClaw's owner lease only under the same host name.
    const gateway = buildApplianceChildren(context({})).find(
      (child) => child.kind === "Deployment" && child.metadata.name === "box-gateway",
    ) as unknown as { spec: { template: { spec: { hostname?: string } } } };
    expect(gateway.spec.template.spec.hostname).toBe("box-gateway");
    // Nothing beyond the Ollama adapter and the hooks plugin loads.
    expect(config.plugins.allow).toEqual(["ollama", "remram-hooks"]);
  });

  it("tell the gateway the chat models' window and reply cap, and keep bootstrap files out of a small window", () => {
    // biome-ignore lint/suspicious/noExplicitAny: a JSON document read back for assertions
    const gatewayConfig = (spec: Record<string, unknown>) => gatewayConfigFor(spec) as any;
    const roomy = gatewayConfig({});
    expect(roomy.models.providers.ollama.models[0]).toMatchObject({
      contextWindow: 16384,
      maxTokens: 2048,
      params: { num_ctx: 16384, num_predict: 2048 },
    });
    expect(roomy.agents.defaults.skipBootstrap).toBeUndefined();
    expect(roomy.tools.allow).toBeUndefined();
    const small = gatewayConfig({
      ollama: { contextWindow: 8192, maxOutputTokens: 128 },
      gateway: { tools: { allow: ["read"] } },
    });
    expect(small.models.providers.ollama.models[0]).toMatchObject({
      contextWindow: 8192,
      params: { num_ctx: 8192, num_predict: 128 },
    });
    expect(small.agents.defaults).toMatchObject({ skipBootstrap: true, contextInjection: "never" });
    expect(small.tools.allow).toEqual(["read"]);
    // Reflection gets room for a whole delta whatever the reply cap; a larger reply cap holds for it too.
    expect(small.models.providers["ollama-reflect"].models[0]).toMatchObject({
      maxTokens: 1024,
      params: { num_ctx: 8192, num_predict: 1024 },
    });
    expect(roomy.models.providers["ollama-reflect"].models[0].maxTokens).toBe(2048);
  });

  it("serve the hooks plugin's metrics on the gateway's metrics port, reachable only from the metrics namespaces", () => {
    const children = buildApplianceChildren(context({}));
    const secret = children.find((child) => child.metadata.name === "box-gateway-config") as unknown as {
      data: Record<string, string>;
    };
    const config = JSON.parse(Buffer.from(secret.data["openclaw.json"] as string, "base64").toString("utf8"));
    expect(config.plugins.entries["remram-hooks"].config.metrics).toEqual({ host: "0.0.0.0", port: 9464 });
    const gateway = children.find(
      (child) => child.kind === "Deployment" && child.metadata.name === "box-gateway",
    ) as { spec: { template: { spec: { containers: { ports: unknown[] }[] } } } } | undefined;
    expect(gateway?.spec.template.spec.containers[0]?.ports).toContainEqual({
      name: "metrics",
      containerPort: 9464,
    });
    expect(children.find((child) => child.metadata.name === "box-allow-gateway-metrics")).toMatchObject({
      kind: "NetworkPolicy",
      spec: {
        podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway" } },
        ingress: [
          {
            from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } }],
            ports: [{ port: 9464 }],
          },
        ],
      },
    });
    // The in-cluster operator lists and pulls models through Ollama's API; only Cortex and the gateway besides.
    expect(children.find((child) => child.metadata.name === "box-allow-ollama")).toMatchObject({
      spec: {
        ingress: [
          {
            from: [
              { podSelector: { matchLabels: { "app.kubernetes.io/name": "cortex" } } },
              { podSelector: { matchLabels: { "app.kubernetes.io/name": "gateway" } } },
              { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "remram-system" } } },
            ],
            ports: [{ port: 11434 }],
          },
        ],
      },
    });
    // Without metrics namespaces the default-deny policy keeps the port closed.
    const closed = buildApplianceChildren(context({}, { metricsNamespaces: [] }));
    expect(closed.find((child) => child.metadata.name === "box-allow-gateway-metrics")).toBeUndefined();
  });

  it("admit to Cortex only the gateway, the operator's namespace, the Remram app and Prometheus from the metrics namespaces", () => {
    const cortexPolicy = (overrides: Partial<ApplianceContext> = {}) =>
      buildApplianceChildren(context({}, overrides)).find(
        (child) => child.metadata.name === "box-allow-cortex",
      ) as (KubeObject & { spec: Record<string, unknown> }) | undefined;
    const policy = cortexPolicy({ metricsNamespaces: ["monitoring", "observability"] });
    expect(policy?.kind).toBe("NetworkPolicy");
    expect(policy?.spec).toEqual({
      podSelector: {
        matchLabels: { "app.kubernetes.io/name": "cortex", "app.kubernetes.io/instance": "box" },
      },
      policyTypes: ["Ingress"],
      ingress: [
        {
          from: [
            {
              podSelector: {
                matchLabels: { "app.kubernetes.io/name": "gateway", "app.kubernetes.io/instance": "box" },
              },
            },
            { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "remram-system" } } },
            // No namespaceSelector: pods of the appliance's own namespace only.
            { podSelector: { matchLabels: { "app.kubernetes.io/name": "remram-app" } } },
          ],
          ports: [{ port: 8080 }],
        },
        {
          from: [
            { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "monitoring" } } },
            { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "observability" } } },
          ],
          ports: [{ port: 8080 }],
        },
      ],
    });
    // No peer may select every namespace (an empty selector) or every pod.
    const peers = JSON.stringify(policy?.spec.ingress);
    expect(peers).not.toContain('"namespaceSelector":{}');
    expect(peers).not.toContain('"podSelector":{}');
    // Without metrics namespaces nobody scrapes Cortex; the callers stay.
    const unscraped = cortexPolicy({ metricsNamespaces: [] });
    const rules = (unscraped?.spec.ingress ?? []) as { from: unknown[] }[];
    expect(rules.map((rule) => rule.from.length)).toEqual([3]);
  });

  it("configure Cortex only with settings it reads: candidates from topK, external OpenSearch credentials by file", () => {
    const children = buildApplianceChildren(
      context({
        cortex: { retrieval: { topK: 24 } },
        opensearch: {
          external: { url: "https://search.lan:9200", credentialsSecretRef: { name: "os-creds" } },
        },
      }),
    );
    const cortex = children.find(
      (child) => child.kind === "Deployment" && child.metadata.name === "box-cortex",
    ) as
      | { spec: { template: { spec: { containers: { env: { name: string; value: string }[] }[] } } } }
      | undefined;
    const env = Object.fromEntries(
      (cortex?.spec.template.spec.containers[0]?.env ?? []).map((e) => [e.name, e.value]),
    );
    expect(env).toMatchObject({
      REMRAM_TOP_K: "24",
      REMRAM_OPENSEARCH_URL: "https://search.lan:9200",
      REMRAM_OPENSEARCH_CREDENTIALS_DIR: "/var/run/secrets/remram/opensearch",
    });
    expect(Object.keys(env).filter((name) => /PASSWORD|REFLECTION|TOKEN_BUDGET/.test(name))).toEqual([]);
  });

  it("keep the node-level device plugin out of the appliance's namespace and ownership, under the given RuntimeClass", () => {
    const daemonSet = buildDevicePlugin(images, "gpu");
    expect(daemonSet.kind).toBe("DaemonSet");
    expect(daemonSet.metadata.namespace).toBe("kube-system");
    expect(daemonSet.metadata.ownerReferences).toBeUndefined();
    expect(podOf(daemonSet).runtimeClassName).toBe("gpu");
  });

  it("never include a RuntimeClass: the operator reads the node's, it does not make one", () => {
    const kinds = buildApplianceChildren(context({ ollama: { runtimeClassName: "gpu" } })).map(
      (child) => child.kind,
    );
    expect(kinds).not.toContain("RuntimeClass");
    const pod = podOf(
      buildOllama(context({ ollama: { runtimeClassName: "gpu" } })).find(
        (child) => child.kind === "Deployment",
      ),
    );
    expect(pod.runtimeClassName).toBe("gpu");
  });
});

describe("the gateway pod's artifacts", () => {
  it("are mounted read-only into every agent's workspace", () => {
    const gateway = buildApplianceChildren(
      context({ gateway: { agents: [{ id: "main" }, { id: "reader", model: "tool-user:1b" }] } }),
    ).find((child) => child.kind === "Deployment" && child.metadata.name === "box-gateway");
    const mounts = (
      podOf(gateway).containers[0] as unknown as {
        volumeMounts: { mountPath: string; subPath?: string; readOnly?: boolean }[];
      }
    ).volumeMounts.filter((mount) => mount.subPath === "cortex/repo/artifacts");
    expect(mounts).toEqual([
      {
        name: "state",
        mountPath: "/data/workspace/artifacts",
        subPath: "cortex/repo/artifacts",
        readOnly: true,
      },
      {
        name: "state",
        mountPath: "/data/workspace/reader/artifacts",
        subPath: "cortex/repo/artifacts",
        readOnly: true,
      },
    ]);
  });
});

describe("the gateway's retrieve cap", () => {
  it("is the spec's, else 250 ms with a GPU and 2 s on the CPU fallback", () => {
    expect(retrieveTimeoutMs(context({}, { useGpu: true }))).toBe(250);
    expect(retrieveTimeoutMs(context({}, { useGpu: false }))).toBe(2000);
    expect(retrieveTimeoutMs(context({ cortex: { retrieval: { timeoutMs: 900 } } }, { useGpu: false }))).toBe(
      900,
    );
    const config = JSON.stringify(gatewayConfigFor({}));
    expect(config).toContain('"retrieveTimeoutMs":2000');
  });
});

describe("the models Ollama must hold", () => {
  it("are the three roles' models, then each agent's own model that no role names, once", () => {
    const ctx = context({
      ollama: { models: { routing: "qwen3:8b", reflection: "qwen3:8b", embedding: "minilm" } },
      gateway: {
        agents: [
          { id: "main" },
          { id: "reader", model: "tool-user:1b" },
          { id: "writer", model: "tool-user:1b" },
          { id: "planner", model: "qwen3:8b" },
        ],
      },
    });
    expect(requiredModelList(ctx)).toEqual([
      { role: "routing", name: "qwen3:8b" },
      { role: "reflection", name: "qwen3:8b" },
      { role: "embedding", name: "minilm" },
      { role: "agent", name: "tool-user:1b" },
    ]);
  });
});

describe("storage of existing claims", () => {
  it("keeps the live size and class when the profile would change them", () => {
    const desired = buildOllama(context({})).find((child) => child.kind === "PersistentVolumeClaim");
    const live = {
      ...desired,
      spec: { resources: { requests: { storage: "50Gi" } }, storageClassName: "local-path" },
    };
    const kept = keepLiveStorage(desired as KubeObject, live as KubeObject) as unknown as {
      spec: { resources: { requests: { storage: string } }; storageClassName: string };
    };
    expect(kept.spec.resources.requests.storage).toBe("50Gi");
    expect(kept.spec.storageClassName).toBe("local-path");
    expect(keepLiveStorage(desired as KubeObject, undefined)).toBe(desired);
  });

  it("keeps the live claim templates of the OpenSearch StatefulSet", () => {
    const desired = buildOpenSearch(context({})).find((child) => child.kind === "StatefulSet") as KubeObject;
    const live = {
      ...desired,
      spec: {
        volumeClaimTemplates: [
          { metadata: { name: "data" }, spec: { resources: { requests: { storage: "50Gi" } } } },
        ],
      },
    };
    const kept = keepLiveStorage(desired, live as KubeObject) as unknown as {
      spec: { volumeClaimTemplates: { spec: { resources: { requests: { storage: string } } } }[] };
    };
    expect(kept.spec.volumeClaimTemplates[0]?.spec.resources.requests.storage).toBe("50Gi");
  });
});

describe("hardware profiles", () => {
  it("ship the baseline, CPU-only and large-GPU profiles", () => {
    expect([...profiles.keys()].sort()).toEqual(["cpu-only", "large-gpu", "moltbox-baseline"]);
  });

  // The smallest box each profile is meant for (its description); requests beyond 70 % of it would leave k3s's own
  // pods unschedulable, and the appliance Pending on exactly the boxes the profile names.
  it.each([
    ["cpu-only", 2],
    ["moltbox-baseline", 12],
    ["large-gpu", 16],
  ] as const)("%s requests at most 70 %% of a %i-core box's CPU", (name, cores) => {
    const profile = profiles.get(name);
    if (profile === undefined) throw new Error(`no profile ${name}`);
    const millicores = (quantity: string): number =>
      quantity.endsWith("m") ? Number(quantity.slice(0, -1)) : Number(quantity) * 1000;
    const requested = [profile.opensearch, profile.ollama, profile.cortex, profile.gateway]
      .map((component) => millicores(component.resources.cpu))
      .reduce((sum, each) => sum + each, 0);
    expect(requested).toBeLessThanOrEqual(cores * 700);
  });

  it("pick a profile from allocatable GPUs and the GPU memory label", () => {
    const gpuNode = (memory?: string): NodeLike => ({
      metadata: { labels: memory ? { "nvidia.com/gpu.memory": memory } : {} },
      status: { allocatable: { "nvidia.com/gpu": "1" } },
    });
    expect(selectProfile(gpuInventory([]))).toBe("cpu-only");
    expect(selectProfile(gpuInventory([{ status: { allocatable: { cpu: "16" } } }]))).toBe("cpu-only");
    expect(selectProfile(gpuInventory([gpuNode("16376")]))).toBe("moltbox-baseline");
    expect(selectProfile(gpuInventory([gpuNode("24564"), gpuNode("49140")]))).toBe("large-gpu");
    expect(selectProfile(gpuInventory([gpuNode()]))).toBe("moltbox-baseline");
    expect(gpuInventory([{ ...gpuNode(), spec: { unschedulable: true } }]).count).toBe(0);
  });

  it("convert memory quantities to MiB", () => {
    expect([quantityToMiB("8Gi"), quantityToMiB("512Mi"), quantityToMiB("1G")]).toEqual([8192, 512, 953]);
  });
});
