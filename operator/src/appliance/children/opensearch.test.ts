import { describe, expect, it } from "vitest";
import { applianceContext } from "../testing/context.js";
import { podOf } from "../testing/pod.js";
import { buildOpenSearch } from "./opensearch.js";

const context = applianceContext;

describe("the appliance's children", () => {
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
});
