import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { openApiDocument, renderOpenApi } from "./openapi.js";
import { routes } from "./routes.js";
import { openApiPath } from "./tools/paths.js";

describe("the contract's OpenAPI document", () => {
  it("is committed as generated from the route table (run `npm run openapi -w contract` after a change)", () => {
    expect(readFileSync(openApiPath, "utf8")).toBe(renderOpenApi());
  });

  it("describes every route of the table once", () => {
    const paths = openApiDocument().paths as Record<string, Record<string, unknown>>;
    const operations = Object.entries(paths).flatMap(([path, methods]) =>
      Object.keys(methods).map((method) => `${method.toUpperCase()} ${path}`),
    );
    expect(operations.sort()).toEqual(
      Object.values(routes)
        .map((route) => `${route.method} ${route.url.replace(/:(\w+)/g, "{$1}")}`)
        .sort(),
    );
  });
});
