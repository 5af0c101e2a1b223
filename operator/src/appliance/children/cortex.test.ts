import { describe, expect, it } from "vitest";
import { pinned } from "../../../../test/harness/src/versions.js";
import { inProcessEmbeddingModel } from "../../api/v1alpha1/remram-appliance.js";
import { buildApplianceChildren } from "../children.js";
import { applianceContext } from "../testing/context.js";
import { podOf as podSpecOf } from "../testing/pod.js";
import { opensearchSecretsVersionAnnotation } from "./cortex.js";

const context = applianceContext;

describe("the appliance's children", () => {
  it("configure Cortex only with settings it reads: candidates from topK, external OpenSearch credentials by file, the reflection model", () => {
    const children = buildApplianceChildren(
      context({
        cortex: { retrieval: { topK: 24 } },
        ollama: { models: { reflection: "qwen3:8b" } },
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
      // Dream words its principles with it (cortex/src/config.ts reads REMRAM_REFLECTION_MODEL).
      REMRAM_REFLECTION_MODEL: "qwen3:8b",
    });
    expect(Object.keys(env).filter((name) => /PASSWORD|TOKEN_BUDGET/.test(name))).toEqual([]);
  });

  it("give Cortex Ollama's embedding model, or its image's own model folder with in-process embeddings", () => {
    const envOf = (spec: Parameters<typeof context>[0]) => {
      const pod = podSpecOf(
        buildApplianceChildren(context(spec)).find(
          (child) => child.kind === "Deployment" && child.metadata.name === "box-cortex",
        ),
      );
      return Object.fromEntries((pod.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    };
    const viaOllama = envOf({
      ollama: { models: { embedding: "nomic-embed-text", embeddingDimensions: 768 } },
    });
    expect(viaOllama).toMatchObject({
      REMRAM_EMBED_MODEL: "nomic-embed-text",
      CORTEX_EMBED_DIMENSIONS: "768",
    });
    expect(viaOllama).not.toHaveProperty("CORTEX_EMBED_RUNTIME");
    expect(envOf({ cortex: { embedding: { runtime: "inProcess" } } })).toMatchObject({
      REMRAM_EMBED_MODEL: "all-minilm-l6-v2-q",
      CORTEX_EMBED_DIMENSIONS: "384",
      CORTEX_EMBED_RUNTIME: "onnx",
      CORTEX_EMBED_MODEL_DIR: "/opt/remram/embedding",
    });
  });

  it("name the in-process model Cortex's image carries: the one hack/install-embedding-onnx.sh installs", () => {
    expect(inProcessEmbeddingModel.name).toBe(pinned("EMBED_ONNX_NAME"));
  });

  it("mount an external OpenSearch's CA bundle for Cortex and roll Cortex when its Secrets change", () => {
    const spec = {
      opensearch: {
        mode: "external",
        external: {
          url: "https://search.lan:9200",
          credentialsSecretRef: { name: "os-creds" },
          caSecretRef: { name: "os-ca", key: "bundle.pem" },
        },
      },
    };
    type CortexDeployment = {
      spec: {
        template: {
          metadata: { annotations?: Record<string, string> };
          spec: {
            containers: {
              env: { name: string; value: string }[];
              volumeMounts: { name: string; mountPath: string }[];
            }[];
            volumes: { name: string; secret?: unknown }[];
          };
        };
      };
    };
    const cortexOf = (version?: string) =>
      buildApplianceChildren(
        context(spec, version === undefined ? {} : { opensearchSecretsVersion: version }),
      ).find(
        (child) => child.metadata.name === "box-cortex" && child.kind === "Deployment",
      ) as unknown as CortexDeployment;
    const template = cortexOf("41/42").spec.template;
    const container = template.spec.containers[0];
    expect(container?.env).toContainEqual({
      name: "REMRAM_OPENSEARCH_CA_FILE",
      value: "/var/run/secrets/remram/opensearch-ca/ca.crt",
    });
    expect(container?.volumeMounts).toContainEqual({
      name: "opensearch-ca",
      mountPath: "/var/run/secrets/remram/opensearch-ca",
      readOnly: true,
    });
    expect(template.spec.volumes).toContainEqual({
      name: "opensearch-ca",
      secret: { secretName: "os-ca", items: [{ key: "bundle.pem", path: "ca.crt" }] },
    });
    expect(template.metadata.annotations).toEqual({ [opensearchSecretsVersionAnnotation]: "41/42" });
    // Embedded: none of it.
    const embedded = buildApplianceChildren(context({})).find(
      (child) => child.metadata.name === "box-cortex" && child.kind === "Deployment",
    ) as unknown as CortexDeployment;
    expect(JSON.stringify(embedded)).not.toMatch(/opensearch-ca|OPENSEARCH_CA|opensearch-secrets-version/);
  });
});

describe("Cortex's backup volume", () => {
  type PodSpec = {
    containers: {
      env: { name: string; value: string }[];
      volumeMounts: { name: string; mountPath: string }[];
    }[];
    volumes: {
      name: string;
      persistentVolumeClaim?: { claimName: string };
      secret?: { secretName: string };
    }[];
  };
  const podOf = (spec: Record<string, unknown>, backupDestinationProblem?: string) => {
    const children = buildApplianceChildren(
      context(spec, backupDestinationProblem === undefined ? {} : { backupDestinationProblem }),
    );
    const cortex = children.find(
      (child) => child.kind === "Deployment" && child.metadata.name === "box-cortex",
    ) as { spec: { template: { spec: PodSpec } } } | undefined;
    if (cortex === undefined) throw new Error("no Cortex Deployment");
    return { pod: cortex.spec.template.spec, children };
  };

  it("mounts the user's claim and tells Cortex where it is and how many backups to keep", () => {
    const { pod, children } = podOf({ backup: { volume: { claimName: "usb-disk" }, keep: 3 } });
    const env = Object.fromEntries((pod.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({ CORTEX_BACKUP_DIR: "/var/lib/remram/backups", CORTEX_BACKUP_KEEP: "3" });
    expect(pod.containers[0]?.volumeMounts).toContainEqual({
      name: "backups",
      mountPath: "/var/lib/remram/backups",
    });
    expect(pod.volumes).toContainEqual({ name: "backups", persistentVolumeClaim: { claimName: "usb-disk" } });
    // The claim is the user's: the appliance creates and owns no claim of that name.
    expect(
      children.filter((child) => child.kind === "PersistentVolumeClaim").map((c) => c.metadata.name),
    ).not.toContain("usb-disk");
  });

  it("points Cortex at an S3 bucket with its key mounted from the Secret, never in the environment", () => {
    const { pod } = podOf({
      backup: {
        s3: {
          endpoint: "https://nas.lan:9000",
          bucket: "household",
          prefix: "remram/moltbox",
          credentialsSecretRef: { name: "nas-s3" },
        },
      },
    });
    const env = Object.fromEntries((pod.containers[0]?.env ?? []).map((e) => [e.name, e.value]));
    expect(env).toMatchObject({
      CORTEX_BACKUP_S3_ENDPOINT: "https://nas.lan:9000",
      CORTEX_BACKUP_S3_BUCKET: "household",
      CORTEX_BACKUP_S3_PREFIX: "remram/moltbox",
      CORTEX_BACKUP_S3_CREDENTIALS_DIR: "/var/run/secrets/remram/backup-s3",
      CORTEX_BACKUP_KEEP: "7",
    });
    expect(env).not.toHaveProperty("CORTEX_BACKUP_DIR");
    expect(pod.volumes).toContainEqual(
      expect.objectContaining({
        name: "backup-s3-credentials",
        secret: expect.objectContaining({ secretName: "nas-s3" }),
      }),
    );
  });

  it("leaves a destination that is not there out, so Cortex still starts", () => {
    for (const backup of [
      { volume: { claimName: "usb-dsik" } },
      {
        s3: {
          endpoint: "https://nas.lan:9000",
          bucket: "household",
          credentialsSecretRef: { name: "nas-s3" },
        },
      },
    ]) {
      const { pod } = podOf({ backup }, "missing");
      expect(
        (pod.containers[0]?.env ?? []).map((e) => e.name).filter((n) => n.startsWith("CORTEX_BACKUP")),
      ).toEqual([]);
      expect(pod.volumes.map((volume) => volume.name)).not.toContain("backups");
      expect(pod.volumes.map((volume) => volume.name)).not.toContain("backup-s3-credentials");
      expect(pod.containers[0]?.volumeMounts.map((mount) => mount.name)).not.toContain("backups");
    }
  });

  it("has no backup folder without spec.backup", () => {
    const { pod } = podOf({});
    expect((pod.containers[0]?.env ?? []).map((e) => e.name)).not.toContain("CORTEX_BACKUP_DIR");
    expect(pod.volumes.map((volume) => volume.name)).not.toContain("backups");
  });
});
