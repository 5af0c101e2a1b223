import type { Client } from "@opensearch-project/opensearch";
import { describe, expect, it } from "vitest";
import {
  type CortexStore,
  rejectsInput,
  request,
  StoreFullError,
  StoreRejectedError,
  StoreUnavailableError,
  writesDocument,
} from "./client.js";
import { indexNames } from "./templates.js";
import { bulkFailure } from "./writes.js";

/** A store whose every request fails as OpenSearch answered: status and error body. */
function failingStore(statusCode: number, error: { type: string; reason: string }): CortexStore {
  const failure = Object.assign(new Error("ResponseError"), {
    meta: { statusCode, body: { error: { ...error, root_cause: [error] } } },
  });
  const client = {
    transport: {
      request: async () => {
        throw failure;
      },
    },
  } as unknown as Client;
  return { client, indices: indexNames("t"), embedDimensions: 4 };
}

const mapping = {
  type: "mapper_parsing_exception",
  reason: "failed to parse field [validFrom] of type [date]",
};
const illegal = { type: "illegal_argument_exception", reason: "[size] parameter cannot be negative" };
const parse = { type: "parse_exception", reason: "failed to parse date field [now-]" };
const immense = {
  type: "illegal_argument_exception",
  reason: 'Document contains at least one immense term in field="statement.keyword"',
};

describe("OpenSearch errors as HTTP answers", () => {
  it("takes a refused value of a document write as the caller's (400)", async () => {
    const store = failingStore(400, mapping);
    await expect(request(store, "PUT", "/t-knowledge/_doc/k1?refresh=wait_for", {})).rejects.toBeInstanceOf(
      StoreRejectedError,
    );
    await expect(request(store, "PUT", "/t-archive/_create/abc", {})).rejects.toBeInstanceOf(
      StoreRejectedError,
    );
    await expect(
      request(failingStore(400, immense), "POST", "/t-records/_update/r1", {}),
    ).rejects.toBeInstanceOf(StoreRejectedError);
  });

  it("takes a write to an index a rebuild has write-blocked as unavailable for now (503), not as Cortex's bug", async () => {
    const blocked = {
      type: "cluster_block_exception",
      reason: "index [t-knowledge-v3] blocked by: [FORBIDDEN/8/index write (api)];",
    };
    await expect(
      request(failingStore(403, blocked), "POST", "/t-knowledge/_update/k1", {}),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
    const forbidden = {
      type: "security_exception",
      reason: "no permissions for [indices:data/write/update]",
    };
    await expect(
      request(failingStore(403, forbidden), "POST", "/t-knowledge/_update/k1", {}),
    ).rejects.not.toBeInstanceOf(StoreUnavailableError);
  });

  it("never answers 400 for a search, count or mapping Cortex built that OpenSearch refuses: that is a 500", async () => {
    for (const error of [illegal, parse, mapping]) {
      for (const [method, path] of [
        ["POST", "/t-knowledge/_search"],
        ["POST", "/t-archive/_count"],
        ["PUT", "/t-knowledge/_mapping"],
        ["POST", "/_bulk"],
      ] as const) {
        const failure = request(failingStore(400, error), method, path, {});
        await expect(failure).rejects.not.toBeInstanceOf(StoreRejectedError);
        await expect(failure).rejects.toThrow(`OpenSearch ${method} ${path}`);
      }
    }
    await expect(
      request(failingStore(400, illegal), "PUT", "/t-knowledge/_doc/k1", {}),
    ).rejects.not.toBeInstanceOf(StoreRejectedError);
    await expect(
      request(failingStore(503, illegal), "POST", "/t-knowledge/_search", {}),
    ).rejects.toBeInstanceOf(StoreUnavailableError);
  });

  it("classifies write errors by type, immense terms by their reason", () => {
    expect(rejectsInput(400, "mapper_parsing_exception")).toBe(true);
    expect(rejectsInput(400, "document_parsing_exception")).toBe(true);
    expect(rejectsInput(400, immense.type, immense.reason)).toBe(true);
    expect(rejectsInput(400, illegal.type, illegal.reason)).toBe(false);
    expect(rejectsInput(400, "parse_exception")).toBe(false);
    expect(rejectsInput(400, "x_content_parse_exception")).toBe(false);
    expect(rejectsInput(409, "mapper_parsing_exception")).toBe(false);
    expect(writesDocument("PUT", "/i/_doc/1")).toBe(true);
    expect(writesDocument("DELETE", "/i/_doc/1")).toBe(false);
    expect(writesDocument("POST", "/i/_search")).toBe(false);
    expect(writesDocument("POST", "/i/_update_by_query")).toBe(false);
  });

  it("answers 400 for a bulk only when every failed item refused its values", () => {
    const item = (error: { type: string; reason: string }) => ({ _id: "x", status: 400, error });
    expect(bulkFailure("m", [item(mapping), item(immense)])).toBeInstanceOf(StoreRejectedError);
    expect(bulkFailure("m", [item(mapping), item(illegal)])).not.toBeInstanceOf(StoreRejectedError);
  });

  it("tells OpenSearch's flood-stage block from other throttling, for a request and for bulk items", async () => {
    const flood = {
      type: "cluster_block_exception",
      reason:
        "index [x] blocked by: [TOO_MANY_REQUESTS/12/disk usage exceeded flood-stage watermark, index has read-only-allow-delete block];",
    };
    const busy = {
      type: "rejected_execution_exception",
      reason: "rejected execution of coordinating operation",
    };
    await expect(request(failingStore(429, flood), "PUT", "/i/_doc/1", {})).rejects.toBeInstanceOf(
      StoreFullError,
    );
    const throttled = request(failingStore(429, busy), "PUT", "/i/_doc/1", {});
    await expect(throttled).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(throttled).rejects.not.toBeInstanceOf(StoreFullError);
    const item = (error: { type: string; reason: string }) => ({ _id: "x", status: 429, error });
    expect(bulkFailure("m", [item(busy), item(flood)])).toBeInstanceOf(StoreFullError);
    expect(bulkFailure("m", [item(busy)])).not.toBeInstanceOf(StoreFullError);
    expect(bulkFailure("m", [item(busy)])).toBeInstanceOf(StoreUnavailableError);
  });
});
