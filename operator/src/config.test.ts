import { readFileSync } from "node:fs";
import { join } from "node:path";
import { load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { defaultImages, loadSettings } from "./config.js";

const repo = join(import.meta.dirname, "../..");
const versions = Object.fromEntries(
  readFileSync(join(repo, "hack/versions.env"), "utf8")
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line))
    .map((line) => line.split("=", 2) as [string, string]),
);
const chartValues = load(readFileSync(join(repo, "charts/remram-operator/values.yaml"), "utf8")) as {
  operandImages: Record<string, string>;
};

// The test bed builds same-version stand-ins of OpenSearch and Ollama and runs this OpenClaw: a release must ship
// the versions the tests ran, so the operator's defaults and the chart's values follow hack/versions.env.
describe("operand image versions", () => {
  const expected = {
    opensearch: `opensearchproject/opensearch:${versions.OPENSEARCH_VERSION}`,
    ollama: `ollama/ollama:${versions.OLLAMA_VERSION}`,
    gateway: `remram/openclaw-gateway:${versions.OPENCLAW_VERSION}`,
  };

  it("follow hack/versions.env in the operator's defaults", () => {
    expect(defaultImages).toMatchObject(expected);
  });

  it("are the same in the chart's operandImages", () => {
    expect(chartValues.operandImages).toEqual(defaultImages);
  });
});

describe("the ingress controller setting", () => {
  it("is k3s's Traefik by default, none when empty, and refused when it names no Service", () => {
    expect(loadSettings({}).ingressController).toEqual({ namespace: "kube-system", name: "traefik" });
    expect(
      loadSettings({ REMRAM_INGRESS_CONTROLLER_SERVICE: "ingress-nginx/ingress-nginx-controller" })
        .ingressController,
    ).toEqual({
      namespace: "ingress-nginx",
      name: "ingress-nginx-controller",
    });
    expect(loadSettings({ REMRAM_INGRESS_CONTROLLER_SERVICE: "" }).ingressController).toBeUndefined();
    expect(() => loadSettings({ REMRAM_INGRESS_CONTROLLER_SERVICE: "traefik" })).toThrowError(
      /REMRAM_INGRESS_CONTROLLER_SERVICE: .*is not <namespace>\/<name>/,
    );
  });
});
