import { describe, expect, it } from "vitest";
import { buildApplianceChildren } from "../children.js";
import { applianceContext } from "../testing/context.js";

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
});
