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

/** Ollama's answer to a streamed pull: one JSON object a line. */
const ndjson = (lines: readonly object[]): Response =>
  new Response(lines.map((line) => `${JSON.stringify(line)}\n`).join(""), {
    headers: { "content-type": "application/x-ndjson" },
  });

const settle = () => new Promise((resolve) => setTimeout(resolve, 10));

describe("ModelPuller", () => {
  it("streams pulls, over plain HTTP only from the registries the spec lists as insecure", async () => {
    const pulls: Record<string, unknown>[] = [];
    const fetchImpl = (async (url: string | URL | Request, init?: RequestInit) => {
      if (String(url).endsWith("/api/tags")) return Response.json({ models: [] });
      pulls.push(JSON.parse(String(init?.body)) as Record<string, unknown>);
      return ndjson([{ status: "pulling manifest" }, { status: "success" }]);
    }) as typeof fetch;
    const puller = new ModelPuller({ fetchImpl });
    await puller.ensure(
      "http://ollama:11434",
      ["mirror.lan:5000/library/minilm:latest", "qwen3:8b", "other.lan/library/x:1"],
      { insecureRegistries: ["mirror.lan:5000"] },
    );
    await settle();
    // ollama-js names the model `name`, which Ollama reads when `model` is absent.
    expect(pulls).toEqual([
      { name: "mirror.lan:5000/library/minilm:latest", stream: true, insecure: true },
      { name: "qwen3:8b", stream: true },
      { name: "other.lan/library/x:1", stream: true },
    ]);
  });

  it("reports a stream that ends without success until a retry gets past the manifest", async () => {
    // The first pull's stream just ends (Ollama went away mid-transfer); the retry's lines come when the test says.
    let send: (line: object) => void = () => {};
    const retry = new ReadableStream<Uint8Array>({
      start(controller) {
        send = (line) => controller.enqueue(new TextEncoder().encode(`${JSON.stringify(line)}\n`));
      },
    });
    const answers = [
      ndjson([
        { status: "pulling manifest" },
        { status: "pulling aaa", digest: "sha256:aaa", total: 100, completed: 40 },
      ]),
      new Response(retry),
    ];
    const fetchImpl = (async (url: string | URL | Request) => {
      if (String(url).endsWith("/api/tags")) return Response.json({ models: [] });
      const answer = answers.shift();
      if (answer === undefined) throw new Error("no third pull expected");
      return answer;
    }) as typeof fetch;
    let changes = 0;
    const onChange = () => changes++;
    const puller = new ModelPuller({ fetchImpl });
    const url = "http://ollama:11434";

    await puller.ensure(url, ["m"], { onChange });
    await settle();
    expect(puller.isPulling(url, "m")).toBe(false);
    // This ensure reports the failure and starts the retry.
    const failed = await puller.ensure(url, ["m"], { onChange });
    expect(failed.pullErrors?.get("m")).toBe(
      "pull failed: Did not receive done or success response in stream.",
    );
    // Where it stopped stays beside the error.
    expect(failed.pulls?.get("m")).toMatchObject({ status: "downloading", completedBytes: 40, percent: 40 });
    expect(puller.isPulling(url, "m")).toBe(true);
    // Manifest first, layers, failure: each publishes and calls back.
    expect(changes).toBe(3);

    send({ status: "pulling manifest" });
    await settle();
    const inManifest = await puller.ensure(url, ["m"], { onChange });
    expect(inManifest.pullErrors?.get("m")).toMatch(/^pull failed/);
    expect(inManifest.pulls?.get("m")?.status).toBe("pulling manifest");

    send({ status: "pulling aaa", digest: "sha256:aaa", total: 100, completed: 41 });
    await settle();
    const resumed = await puller.ensure(url, ["m"], { onChange });
    expect(resumed.pullErrors).toBeUndefined();
    expect(resumed.pulls?.get("m")).toMatchObject({ status: "downloading", completedBytes: 41 });
    puller.stop();
  });

  it("reports Ollama unreachable without starting pulls", async () => {
    const fetchImpl = (async () => {
      throw new TypeError("fetch failed", { cause: new Error("connect ECONNREFUSED 10.0.0.1:11434") });
    }) as typeof fetch;
    const report = await new ModelPuller({ fetchImpl }).ensure("http://ollama:11434", ["m"]);
    expect(report).toEqual({
      pullError: "Ollama unreachable: fetch failed (connect ECONNREFUSED 10.0.0.1:11434)",
    });
  });
});
