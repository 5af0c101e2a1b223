import { describe, expect, it } from "vitest";
import { renderEnvFile, renderSummary } from "./summary.js";

describe("the test bed's env file", () => {
  it("holds one sourceable line per endpoint of the started services only", () => {
    const text = renderEnvFile({ opensearch: { url: "http://127.0.0.1:40001" } });
    expect(text.split("\n").filter((line) => !line.startsWith("#") && line !== "")).toEqual([
      "REMRAM_OPENSEARCH_URL=http://127.0.0.1:40001",
    ]);
  });

  it("quotes values a shell would split or expand", () => {
    const text = renderEnvFile({
      kubernetes: {
        server: "https://127.0.0.1:6443",
        kubeconfig: "/tmp/my dir/it's",
        token: "t",
        caInsecure: true,
      },
    });
    expect(text).toContain(`KUBECONFIG='/tmp/my dir/it'\\''s'`);
    expect(text).not.toContain("admin-secret-token");
  });
});

describe("the podman service's lines", () => {
  const podman = {
    socket: "/repo/.remram/run/podman/podman.sock",
    dockerHost: "unix:///repo/.remram/run/podman/podman.sock",
    host: "10.199.1.2",
    namespace: "remram-podman",
    network: "remram-podman",
  };

  it("give testcontainers the socket, the namespace's address and no Ryuk", () => {
    const text = renderEnvFile({ podman });
    expect(text.split("\n").filter((line) => !line.startsWith("#") && line !== "")).toEqual([
      "DOCKER_HOST=unix:///repo/.remram/run/podman/podman.sock",
      "TESTCONTAINERS_HOST_OVERRIDE=10.199.1.2",
      "TESTCONTAINERS_RYUK_DISABLED=true",
    ]);
  });

  it("name the socket and the namespace in the summary", () => {
    const summary = renderSummary({ podman });
    expect(summary).toContain("unix:///repo/.remram/run/podman/podman.sock");
    expect(summary).toContain("network namespace remram-podman");
  });
});

describe("the demo summary", () => {
  it("names every running service with its address and how to stop it", () => {
    const summary = renderSummary({
      opensearch: { url: "http://127.0.0.1:40001" },
      ollama: {
        url: "http://127.0.0.1:40002",
        embedModel: "all-minilm-l6-v2",
        chatModel: "smollm2-135m-instruct",
      },
    });
    expect(summary).toContain("http://127.0.0.1:40001");
    expect(summary).toContain("chat: smollm2-135m-instruct");
    expect(summary).toContain("make infra-down");
    expect(summary).not.toContain("kube-apiserver");
  });

  it("shows the model registry and a pull command for one of its models", () => {
    const summary = renderSummary({
      registry: {
        url: "http://127.0.0.1:40003",
        blobUrl: "http://localhost:40004/",
        embedModel: "127.0.0.1:40003/library/all-minilm-l6-v2:latest",
        chatModel: "127.0.0.1:40003/library/smollm2-135m-instruct:latest",
        fewshotModel: "127.0.0.1:40003/library/smollm2-135m-fewshot:latest",
      },
    });
    expect(summary).toContain("http://127.0.0.1:40003");
    expect(summary).toContain("ollama pull --insecure 127.0.0.1:40003/library/all-minilm-l6-v2:latest");
  });
});
