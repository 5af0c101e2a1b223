import { describe, expect, it } from "vitest";
import { type PlanInput, planModelRegistry } from "./model-registry.js";

const input: PlanInput = {
  listenAddress: "127.0.0.1",
  referenceHost: "127.0.0.1",
  blobHost: "localhost",
  port: 40010,
  blobPort: 40011,
  storageDir: "/run/registry-40010/storage",
  models: {
    embedModel: "all-minilm-l6-v2",
    chatModel: "smollm2-135m-instruct:q8",
    fewshotModel: "smollm2-135m-fewshot",
  },
};

describe("planning a model registry", () => {
  it("names the models as `ollama pull` takes them, tagging an untagged name latest", () => {
    const { endpoints } = planModelRegistry(input);
    expect(endpoints).toEqual({
      url: "http://127.0.0.1:40010",
      blobUrl: "http://localhost:40011/",
      embedModel: "127.0.0.1:40010/library/all-minilm-l6-v2:latest",
      chatModel: "127.0.0.1:40010/library/smollm2-135m-instruct:q8",
      fewshotModel: "127.0.0.1:40010/library/smollm2-135m-fewshot:latest",
    });
  });

  it("configures filesystem storage and redirects blob downloads to the blob server's host", () => {
    const { config } = planModelRegistry(input);
    expect(config.http.addr).toBe("127.0.0.1:40010");
    expect(config.storage.filesystem.rootdirectory).toBe("/run/registry-40010/storage");
    expect(config.middleware.storage).toEqual([
      { name: "redirect", options: { baseurl: "http://localhost:40011/" } },
    ]);
    // The registry reads YAML; JSON is YAML, and the version must stay a string ("0.1", not 0.1).
    expect(JSON.parse(JSON.stringify(config)).version).toBe("0.1");
  });

  it("keeps pushes local while pods would pull by another name (the real node's case)", () => {
    const plan = planModelRegistry({
      ...input,
      listenAddress: "0.0.0.0",
      referenceHost: "models.remram.internal",
      blobHost: "10.199.0.1",
    });
    expect(plan.config.http.addr).toBe("0.0.0.0:40010");
    expect(plan.localUrl).toBe("http://127.0.0.1:40010");
    expect(plan.localBlobUrl).toBe("http://127.0.0.1:40011/");
    expect(plan.endpoints.embedModel).toBe("models.remram.internal:40010/library/all-minilm-l6-v2:latest");
    expect(plan.endpoints.blobUrl).toBe("http://10.199.0.1:40011/");
    expect(plan.pushes).toEqual([
      { source: "all-minilm-l6-v2", destination: "127.0.0.1:40010/library/all-minilm-l6-v2:latest" },
      {
        source: "smollm2-135m-instruct:q8",
        destination: "127.0.0.1:40010/library/smollm2-135m-instruct:q8",
      },
      { source: "smollm2-135m-fewshot", destination: "127.0.0.1:40010/library/smollm2-135m-fewshot:latest" },
    ]);
  });

  it("refuses a blob host equal to the reference host, which Ollama would not follow", () => {
    expect(() => planModelRegistry({ ...input, blobHost: "127.0.0.1" })).toThrow(
      /blob host must differ from the reference host.*no Location header/,
    );
  });

  it("brackets IPv6 addresses", () => {
    const plan = planModelRegistry({ ...input, listenAddress: "::1", referenceHost: "::1" });
    expect(plan.config.http.addr).toBe("[::1]:40010");
    expect(plan.endpoints.url).toBe("http://[::1]:40010");
  });
});
