import { existsSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testbedEndpoints } from "../inject.js";
import { isAlive } from "../process.js";
import { startOpenSearch } from "./opensearch.js";

const { url } = testbedEndpoints("opensearch");

/** One JSON call to OpenSearch; a non-2xx answer fails the test with OpenSearch's own explanation. */
async function call<T>(base: string, method: string, path: string, body?: unknown): Promise<T> {
  const response = await fetch(`${base}${path}`, {
    method,
    headers: { "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text) as T;
}

interface SearchResponse {
  hits: { hits: { _id: string }[] };
}

const hitIds = (response: SearchResponse): string[] => response.hits.hits.map((hit) => hit._id);

describe("the test bed's OpenSearch", () => {
  const index = `smoke-${process.pid}-${Date.now()}`;
  // Three notes with hand-made 4-dimension embeddings: each points mostly along its own axis.
  const notes = {
    heating: { text: "The boiler heats the house every winter morning", embedding: [0.9, 0.1, 0, 0] },
    runner: { text: "She runs along the river before breakfast", embedding: [0.1, 0.9, 0.1, 0] },
    garden: { text: "Tomatoes grow in the greenhouse", embedding: [0, 0.1, 0.9, 0.1] },
  };

  beforeAll(async () => {
    await call(url, "PUT", `/${index}`, {
      settings: { index: { knn: true, number_of_shards: 1, number_of_replicas: 0 } },
      mappings: {
        properties: {
          text: { type: "text", analyzer: "english" },
          // Lucene is named explicitly: k-NN's default engine (faiss) needs native libraries the Maven zip lacks.
          embedding: {
            type: "knn_vector",
            dimension: 4,
            method: { name: "hnsw", engine: "lucene", space_type: "cosinesimil" },
          },
        },
      },
    });
    for (const [id, note] of Object.entries(notes)) await call(url, "PUT", `/${index}/_doc/${id}`, note);
    await call(url, "POST", `/${index}/_refresh`);
  });

  afterAll(async () => {
    await call(url, "DELETE", `/${index}`);
  });

  it("ranks the note that shares the query's words first with BM25", async () => {
    const response = await call<SearchResponse>(url, "POST", `/${index}/_search`, {
      query: { match: { text: "greenhouse tomatoes" } },
    });
    expect(hitIds(response)).toEqual(["garden"]);
  });

  it("stems english text, so a query for 'running' finds a note that says 'runs'", async () => {
    const response = await call<SearchResponse>(url, "POST", `/${index}/_search`, {
      query: { match: { text: "running" } },
    });
    expect(hitIds(response)).toEqual(["runner"]);
  });

  it("returns the nearest embedding first with a Lucene HNSW k-NN query", async () => {
    const response = await call<SearchResponse>(url, "POST", `/${index}/_search`, {
      size: 3,
      query: { knn: { embedding: { vector: [0.8, 0.2, 0.1, 0], k: 3 } } },
    });
    expect(hitIds(response)).toEqual(["heating", "runner", "garden"]);
  });
});

describe("the test bed's OpenSearch modules beyond the integ-test distribution", () => {
  it("deletes by query (reindex module)", async () => {
    const index = `smoke-dbq-${process.pid}-${Date.now()}`;
    await call(url, "PUT", `/${index}`, {
      settings: { index: { number_of_shards: 1, number_of_replicas: 0 } },
    });
    try {
      await call(url, "PUT", `/${index}/_doc/stale`, { state: "stale" });
      await call(url, "PUT", `/${index}/_doc/fresh?refresh=true`, { state: "fresh" });
      const deleted = await call<{ deleted: number }>(
        url,
        "POST",
        `/${index}/_delete_by_query?refresh=true`,
        {
          query: { term: { "state.keyword": "stale" } },
        },
      );
      expect(deleted.deleted).toBe(1);
      const left = await call<SearchResponse>(url, "POST", `/${index}/_search`, { query: { match_all: {} } });
      expect(hitIds(left)).toEqual(["fresh"]);
    } finally {
      await call(url, "DELETE", `/${index}`);
    }
  });

  it("runs painless update scripts (lang-painless module)", async () => {
    const index = `smoke-painless-${process.pid}-${Date.now()}`;
    await call(url, "PUT", `/${index}`, {
      settings: { index: { number_of_shards: 1, number_of_replicas: 0 } },
    });
    try {
      await call(url, "PUT", `/${index}/_doc/counter`, { uses: 1 });
      await call(url, "POST", `/${index}/_update/counter?refresh=true`, {
        script: { lang: "painless", source: "ctx._source.uses += params.by", params: { by: 2 } },
      });
      const doc = await call<{ _source: { uses: number } }>(url, "GET", `/${index}/_doc/counter`);
      expect(doc._source.uses).toBe(3);
    } finally {
      await call(url, "DELETE", `/${index}`);
    }
  });
});

describe("startOpenSearch", () => {
  it("starts a second node beside the test bed's on its own ports and data dir, and stop() removes both", async () => {
    const second = await startOpenSearch();
    try {
      expect(second.endpoints.url).not.toBe(url);
      type NodesSettings = { nodes: Record<string, { settings: { path: { data: string[] | string } } }> };
      const dataDirOf = async (base: string): Promise<string> => {
        const nodes = await call<NodesSettings>(
          base,
          "GET",
          "/_nodes/settings?filter_path=nodes.*.settings.path.data",
        );
        const [node] = Object.values(nodes.nodes);
        return String(node?.settings.path.data);
      };
      const [ours, theirs] = await Promise.all([dataDirOf(second.endpoints.url), dataDirOf(url)]);
      expect(ours).not.toBe(theirs);
      expect(existsSync(ours)).toBe(true);

      await second.stop();
      expect(second.processes.every((process) => !isAlive(process.pid))).toBe(true);
      expect(existsSync(ours)).toBe(false);
      await expect(fetch(second.endpoints.url)).rejects.toThrow();
    } finally {
      await second.stop();
    }
  }, 240_000);
});
