import { describe, expect, it } from "vitest";
import { buildApplianceChildren } from "../children.js";
import { applianceContext } from "../testing/context.js";
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
