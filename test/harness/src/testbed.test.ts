import { describe, expect, it, vi } from "vitest";
import { tokenKubeconfig } from "./backends/containers.js";
import { selectedBackend, selectedServices, servicesToStart, startTestbed } from "./testbed.js";

describe("choosing test-bed services", () => {
  it("starts everything by default and for 'all'", () => {
    const all = ["opensearch", "ollama", "registry", "kubernetes", "node", "podman"];
    expect(selectedServices(undefined)).toEqual(all);
    expect(selectedServices("all")).toEqual(all);
  });

  it("narrows to the named services", () => {
    expect(selectedServices("opensearch, ollama")).toEqual(["opensearch", "ollama"]);
  });

  it("starts kubernetes for the node and ollama for the registry, each once", () => {
    expect(servicesToStart(["registry"], "processes")).toEqual({
      names: ["ollama"],
      realNode: false,
      withRegistry: true,
    });
    expect(servicesToStart(["node", "ollama", "kubernetes", "registry"], "processes")).toEqual({
      names: ["kubernetes", "ollama"],
      realNode: true,
      withRegistry: true,
    });
  });

  it("leaves the node and the registry out with the container backend", () => {
    expect(servicesToStart(["opensearch", "node", "registry"], "containers")).toEqual({
      names: ["opensearch", "kubernetes", "ollama"],
      realNode: false,
      withRegistry: false,
    });
  });

  it("rejects unknown names with the list of known ones", () => {
    expect(() => selectedServices("opensearch,postgres")).toThrow(
      /unknown services: postgres.*known: opensearch/,
    );
  });
});

describe("choosing the test-bed backend", () => {
  it("defaults to local processes", () => {
    expect(selectedBackend(undefined)).toBe("processes");
    expect(selectedBackend("")).toBe("processes");
  });

  it("refuses the podman service with containers, where the Docker engine serves testcontainers", async () => {
    vi.stubEnv("REMRAM_TESTBED_BACKEND", "containers");
    try {
      await expect(startTestbed({ services: ["podman"] })).rejects.toThrow(/process backend only/);
    } finally {
      vi.unstubAllEnvs();
    }
  });

  it("accepts containers and rejects anything else clearly", () => {
    expect(selectedBackend("containers")).toBe("containers");
    expect(() => selectedBackend("docker")).toThrow(/must be "processes" \(default\) or "containers"/);
  });
});

describe("the token kubeconfig of the container backend", () => {
  it("is a kubeconfig whose current context uses the bearer token against the given server", () => {
    const config = JSON.parse(tokenKubeconfig("https://127.0.0.1:6443", "abc.def")) as {
      "current-context": string;
      contexts: { name: string; context: { cluster: string; user: string } }[];
      clusters: { name: string; cluster: { server: string } }[];
      users: { name: string; user: { token: string } }[];
    };
    const context = config.contexts.find((entry) => entry.name === config["current-context"]);
    expect(config.clusters.find((entry) => entry.name === context?.context.cluster)?.cluster.server).toBe(
      "https://127.0.0.1:6443",
    );
    expect(config.users.find((entry) => entry.name === context?.context.user)?.user.token).toBe("abc.def");
  });
});
