import { describe, expect, it } from "vitest";
import { reflectionResponseFormat } from "../../../hooks/src/reflection.js";
import { reflectionDeltaJsonSchema } from "./reflection-delta-schema.js";

describe("the reflection delta's schema in the gateway config", () => {
  it("is the hooks plugin's own (regenerate reflection-delta-schema.ts from the printed schema when it changes)", () => {
    const format = reflectionResponseFormat() as { json_schema: { schema: unknown } };
    expect(reflectionDeltaJsonSchema, JSON.stringify(format.json_schema.schema, null, 2)).toEqual(
      format.json_schema.schema,
    );
  });
});
