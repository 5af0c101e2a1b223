import { describe, expect, it } from "vitest";
import { ModelPuller, modelRegistryHost } from "./model-puller.js";

describe("modelRegistryHost", () => {
  it.each([
    ["qwen3:8b", undefined],
    ["library/qwen3:8b", undefined],
    ["someone/model:tag", undefined],
    ["registry.lan/library/minilm:latest", "registry.lan"],
    ["mirror.remram.svc.cluster.local:5000/library/minilm:latest", "mirror.remram.svc.cluster.local:5000"],
    ["10.0.0.5:5000/library/minilm", "10.0.0.5:5000"],
    ["localhost/library/minilm", "localhost"],
  ])("%s → %s", (model, host) => {
    expect(modelRegistryHost(model)).toBe(host);
  });
});

describe("ModelPuller", () => {
  it("pulls over plain HTTP only from the registries the spec lists as insecure", async () => {
    const pulls: Record<string, unknown>[] = [];
    const fetchImpl = (async (url: string | URL | Request, init?: RequestInit) => {
      if (String(url).endsWith("/api/tags")) return Response.json({ models: [] });
      pulls.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return Response.json({ status: "success" });
    }) as typeof fetch;
    const puller = new ModelPuller(fetchImpl);
    await puller.ensure(
      "http://ollama:11434",
      ["mirror.lan:5000/library/minilm:latest", "qwen3:8b", "other.lan/library/x:1"],
      ["mirror.lan:5000"],
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(pulls).toEqual([
      { model: "mirror.lan:5000/library/minilm:latest", stream: false, insecure: true },
      { model: "qwen3:8b", stream: false },
      { model: "other.lan/library/x:1", stream: false },
    ]);
  });
});
