import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import * as k8s from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../inject.js";
import { binPath, repoRoot } from "../paths.js";
import { waitFor } from "../wait.js";
import { kubeRequest } from "./kube-request.js";
import { createKwokNode, deleteKwokNode } from "./kwok-nodes.js";

const run = promisify(execFile);

const endpoints = testbedEndpoints("kubernetes");
const kubeconfig = new k8s.KubeConfig();
kubeconfig.loadFromFile(endpoints.kubeconfig);
const core = kubeconfig.makeApiClient(k8s.CoreV1Api);
const apps = kubeconfig.makeApiClient(k8s.AppsV1Api);
const apiextensions = kubeconfig.makeApiClient(k8s.ApiextensionsV1Api);
const customObjects = kubeconfig.makeApiClient(k8s.CustomObjectsApi);
const admission = kubeconfig.makeApiClient(k8s.AdmissionregistrationV1Api);

// The cluster outlives this file (one test bed per vitest run), so every name here is unique to this run.
const suffix = randomBytes(3).toString("hex");
const namespace = `testbed-${suffix}`;
const nodeName = `kwok-cpu-${suffix}`;
const gpuNodeName = `kwok-gpu-${suffix}`;
const nodeLabel = "testbed.remram.io/run";

const isNotFound = (error: unknown): boolean => error instanceof k8s.ApiException && error.code === 404;

async function waitUntilGone(read: () => Promise<unknown>, what: string): Promise<void> {
  await waitFor(
    async () => {
      try {
        await read();
        return undefined;
      } catch (error) {
        if (isNotFound(error)) return true;
        throw error;
      }
    },
    { what: `${what} deleted`, timeoutMs: 60_000, intervalMs: 500 },
  );
}

beforeAll(async () => {
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await createKwokNode(endpoints, {
    name: nodeName,
    cpu: "4",
    memory: "8Gi",
    labels: { [nodeLabel]: suffix },
  });
});

afterAll(async () => {
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  await deleteKwokNode(endpoints, nodeName);
  await deleteKwokNode(endpoints, gpuNodeName);
});

describe("the Kubernetes test bed", () => {
  it("reports the pinned Kubernetes version, not the v0.0.0 of an unstamped build", async () => {
    const response = await kubeRequest(endpoints, "GET", "/version");
    expect(JSON.parse(response.body)).toMatchObject({ gitVersion: "v1.34.4", major: "1", minor: "34" });
    const { stdout } = await run(binPath("kubectl"), [
      "--kubeconfig",
      endpoints.kubeconfig,
      "version",
      "-o",
      "json",
    ]);
    const versions = JSON.parse(stdout) as { clientVersion: { gitVersion: string } };
    expect(versions.clientVersion.gitVersion).toBe("v1.34.4");
  });

  it("enforces RBAC for impersonated users while the admin token may do anything", async () => {
    const canI = async (as: string): Promise<string> => {
      const result = await run(binPath("kubectl"), [
        "--kubeconfig",
        endpoints.kubeconfig,
        "auth",
        "can-i",
        "create",
        "configmaps",
        "-n",
        namespace,
        ...(as === "" ? [] : [`--as=${as}`]),
      ]).catch((error: { stdout?: string }) => ({ stdout: error.stdout ?? "" }));
      return result.stdout.trim();
    };
    expect(await canI("")).toBe("yes");
    expect(await canI("someone-without-bindings")).toBe("no");
  });

  it("serves a CustomResourceDefinition, stores its resources and rejects ones that break its schema", async () => {
    const group = `testbed-${suffix}.remram.io`;
    await apiextensions.createCustomResourceDefinition({
      body: {
        metadata: { name: `widgets.${group}` },
        spec: {
          group,
          scope: "Namespaced",
          names: { plural: "widgets", singular: "widget", kind: "Widget", listKind: "WidgetList" },
          versions: [
            {
              name: "v1",
              served: true,
              storage: true,
              schema: {
                openAPIV3Schema: {
                  type: "object",
                  properties: {
                    spec: {
                      type: "object",
                      required: ["size"],
                      properties: { size: { type: "integer", minimum: 1 } },
                    },
                  },
                },
              },
            },
          ],
        },
      },
    });
    await waitFor(
      async () => {
        const crd = await apiextensions.readCustomResourceDefinition({ name: `widgets.${group}` });
        return crd.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
          ? true
          : undefined;
      },
      { what: "the Widget CRD Established", timeoutMs: 30_000 },
    );
    const widget = { group, version: "v1", namespace, plural: "widgets" };
    await customObjects.createNamespacedCustomObject({
      ...widget,
      body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "small" }, spec: { size: 2 } },
    });
    const stored = (await customObjects.getNamespacedCustomObject({ ...widget, name: "small" })) as {
      spec: { size: number };
    };
    expect(stored.spec.size).toBe(2);
    await expect(
      customObjects.createNamespacedCustomObject({
        ...widget,
        body: { apiVersion: `${group}/v1`, kind: "Widget", metadata: { name: "broken" }, spec: { size: 0 } },
      }),
    ).rejects.toMatchObject({ code: 422 });
    await apiextensions.deleteCustomResourceDefinition({ name: `widgets.${group}` });
  });

  it("denies a request that a ValidatingAdmissionPolicy forbids", async () => {
    const name = `testbed-${suffix}-no-forbidden-key`;
    await admission.createValidatingAdmissionPolicy({
      body: {
        metadata: { name },
        spec: {
          failurePolicy: "Fail",
          matchConstraints: {
            resourceRules: [
              { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] },
            ],
          },
          validations: [
            { expression: "!has(object.data) || !('forbidden' in object.data)", message: "no forbidden key" },
          ],
        },
      },
    });
    await admission.createValidatingAdmissionPolicyBinding({
      body: {
        metadata: { name },
        spec: {
          policyName: name,
          validationActions: ["Deny"],
          matchResources: {
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
          },
        },
      },
    });
    try {
      // Policies are compiled and picked up asynchronously; retry until the denial shows.
      const denial = await waitFor(
        async () => {
          const attempt = `probe-${randomBytes(3).toString("hex")}`;
          try {
            await core.createNamespacedConfigMap({
              namespace,
              body: { metadata: { name: attempt }, data: { forbidden: "yes" } },
            });
            return undefined;
          } catch (error) {
            if (error instanceof k8s.ApiException) return error;
            throw error;
          }
        },
        { what: "the policy denying a ConfigMap", timeoutMs: 30_000, intervalMs: 500 },
      );
      expect(denial.code).toBe(422);
      expect(denial.message).toContain("no forbidden key");
      await core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: "allowed" }, data: { fine: "yes" } },
      });
    } finally {
      await admission.deleteValidatingAdmissionPolicyBinding({ name });
      await admission.deleteValidatingAdmissionPolicy({ name });
    }
  });

  it("makes a Deployment Available with its pod Running and Ready on a kwok node", async () => {
    const labels = { app: "web" };
    await apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "web" },
        spec: {
          replicas: 2,
          selector: { matchLabels: labels },
          template: {
            metadata: { labels },
            spec: {
              nodeSelector: { [nodeLabel]: suffix },
              containers: [
                { name: "web", image: "registry.invalid/web:1", resources: { requests: { cpu: "100m" } } },
              ],
            },
          },
        },
      },
    });
    await waitFor(
      async () => {
        const deployment = await apps.readNamespacedDeployment({ name: "web", namespace });
        const available = deployment.status?.conditions?.some(
          (c) => c.type === "Available" && c.status === "True",
        );
        return available && deployment.status?.availableReplicas === 2 ? true : undefined;
      },
      { what: "Deployment web Available", timeoutMs: 90_000, intervalMs: 500 },
    );
    const pods = await core.listNamespacedPod({ namespace, labelSelector: "app=web" });
    expect(pods.items).toHaveLength(2);
    // kwok hands out pod IPs from the node's podCIDR, which the controller manager allocates once a real node
    // needs pod CIDRs; without one it falls back to its own --cidr.
    const podCidr = (await core.readNode({ name: nodeName })).spec?.podCIDR;
    const podPrefix = podCidr ? podCidr.split(".").slice(0, 3).join(".") : "10.0.0";
    for (const pod of pods.items) {
      expect(pod.spec?.nodeName).toBe(nodeName);
      expect(pod.status?.phase).toBe("Running");
      expect(pod.status?.conditions?.find((c) => c.type === "Ready")?.status).toBe("True");
      expect(pod.status?.podIP?.startsWith(`${podPrefix}.`)).toBe(true);
    }
  });

  it("schedules a pod requesting nvidia.com/gpu onto the node that advertises one, and no more than it has", async () => {
    const gpuSelector = `${suffix}-gpu`;
    await createKwokNode(endpoints, {
      name: gpuNodeName,
      cpu: "8",
      memory: "32Gi",
      gpu: 1,
      labels: { [nodeLabel]: gpuSelector },
    });
    const gpuPod = (name: string): k8s.V1Pod => ({
      metadata: { name },
      spec: {
        nodeSelector: { [nodeLabel]: gpuSelector },
        containers: [
          {
            name: "cuda",
            image: "registry.invalid/cuda:1",
            resources: { limits: { "nvidia.com/gpu": "1" } },
          },
        ],
      },
    });
    await core.createNamespacedPod({ namespace, body: gpuPod("gpu-first") });
    const running = await waitFor(
      async () => {
        const pod = await core.readNamespacedPod({ name: "gpu-first", namespace });
        return pod.status?.phase === "Running" ? pod : undefined;
      },
      { what: "pod gpu-first Running", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(running.spec?.nodeName).toBe(gpuNodeName);

    await core.createNamespacedPod({ namespace, body: gpuPod("gpu-second") });
    const unschedulable = await waitFor(
      async () => {
        const pod = await core.readNamespacedPod({ name: "gpu-second", namespace });
        return pod.status?.conditions?.find((c) => c.type === "PodScheduled" && c.reason === "Unschedulable");
      },
      { what: "pod gpu-second reported Unschedulable", timeoutMs: 60_000, intervalMs: 500 },
    );
    expect(unschedulable.message).toContain("Insufficient nvidia.com/gpu");
  });

  it("installs a Helm chart whose Deployment becomes ready, and uninstalls it completely", async () => {
    const helmHome = mkdtempSync(join(tmpdir(), "remram-helm-"));
    const helm = (...args: string[]) =>
      run(binPath("helm"), [...args, "--kubeconfig", endpoints.kubeconfig, "--namespace", namespace], {
        env: {
          ...process.env,
          HELM_CACHE_HOME: join(helmHome, "cache"),
          HELM_CONFIG_HOME: join(helmHome, "config"),
          HELM_DATA_HOME: join(helmHome, "data"),
        },
      });
    try {
      const release = `tiny-${suffix}`;
      const chart = join(repoRoot, "test", "harness", "fixtures", "tiny-chart");
      await helm("install", release, chart, "--set", "greeting=from-the-suite", "--wait", "--timeout", "90s");

      const config = await core.readNamespacedConfigMap({ name: `${release}-config`, namespace });
      expect(config.data?.greeting).toBe("from-the-suite");
      const deployment = await apps.readNamespacedDeployment({ name: `${release}-tiny`, namespace });
      expect(deployment.status?.readyReplicas).toBe(1);
      const listed = JSON.parse((await helm("list", "-o", "json")).stdout) as {
        name: string;
        status: string;
      }[];
      expect(listed).toContainEqual(expect.objectContaining({ name: release, status: "deployed" }));

      await helm("uninstall", release, "--wait", "--timeout", "60s");
      await waitUntilGone(
        () => core.readNamespacedConfigMap({ name: `${release}-config`, namespace }),
        "ConfigMap",
      );
      await waitUntilGone(
        () => apps.readNamespacedDeployment({ name: `${release}-tiny`, namespace }),
        "Deployment",
      );
      expect(JSON.parse((await helm("list", "-o", "json")).stdout)).toEqual([]);
    } finally {
      rmSync(helmHome, { recursive: true, force: true });
    }
  });
});
