import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { type JsonSchema, openApiSchemaFor, toStructuralSchema } from "./crd.js";
import { generatedFiles } from "./generated-files.js";
import { allKinds, artifactsAgentRefusal, remramApplianceKind, sandboxRefusal } from "./v1alpha1/index.js";

const repoRoot = join(import.meta.dirname, "../../..");

/** Paths of schema nodes that break a rule, so a failure names the field. */
function findUnbounded(node: JsonSchema, path: string, found: string[]): string[] {
  if (
    node.type === "string" &&
    node.maxLength === undefined &&
    node.enum === undefined &&
    node.format !== "date-time"
  ) {
    found.push(path);
  }
  if (node.type === "array" && node.maxItems === undefined) found.push(path);
  if (node.additionalProperties !== undefined && node.maxProperties === undefined) found.push(path);
  for (const [name, child] of Object.entries((node.properties ?? {}) as Record<string, JsonSchema>)) {
    findUnbounded(child, `${path}.${name}`, found);
  }
  if (node.items) findUnbounded(node.items as JsonSchema, `${path}[]`, found);
  if (typeof node.additionalProperties === "object") {
    findUnbounded(node.additionalProperties as JsonSchema, `${path}{}`, found);
  }
  return found;
}

describe("the generated CRDs", () => {
  it("match the committed files in crds/ (run `npm run crds -w operator` after changing a schema)", () => {
    for (const [relativePath, content] of generatedFiles()) {
      expect(readFileSync(join(repoRoot, relativePath), "utf8"), relativePath).toBe(content);
    }
  });

  it.each(allKinds.map((kind) => [kind.kind, kind] as const))(
    "bound every string, list and map of %s",
    (_, kind) => {
      const schema = openApiSchemaFor(kind);
      const properties = schema.properties as Record<string, JsonSchema>;
      const unbounded = [
        ...findUnbounded(properties.spec as JsonSchema, "spec", []),
        ...findUnbounded(properties.status as JsonSchema, "status", []),
      ];
      expect(unbounded).toEqual([]);
    },
  );

  it("admit only sandbox off, keeping OpenClaw's other modes in the enum for a future backend", () => {
    const spec = (openApiSchemaFor(remramApplianceKind).properties as Record<string, JsonSchema>)
      .spec as JsonSchema;
    const gateway = (spec.properties as Record<string, JsonSchema>).gateway as JsonSchema;
    const sandbox = (gateway.properties as Record<string, JsonSchema>).sandbox as JsonSchema;
    expect(sandbox).toMatchObject({ default: "off", enum: ["off", "non-main", "all"] });
    expect(gateway["x-kubernetes-validations"]).toEqual([
      { rule: "!has(self.sandbox) || self.sandbox == 'off'", message: sandboxRefusal, fieldPath: ".sandbox" },
      {
        rule: "!has(self.agents) || self.agents.all(a, a.id != 'artifacts')",
        message: artifactsAgentRefusal,
        fieldPath: ".agents",
      },
    ]);
    expect(sandboxRefusal).toMatch(/Docker daemon.*use off/);
  });

  it("show Ready, Reason and Age columns for every kind", () => {
    for (const kind of allKinds) {
      expect(kind.printerColumns.map((column) => column.name)).toEqual(
        expect.arrayContaining(["Ready", "Reason", "Age"]),
      );
    }
  });
});

describe("the structural schema rewrite", () => {
  it("turns a union of string literals into one enum", () => {
    const schema = z.toJSONSchema(z.union([z.literal("a"), z.enum(["b", "c"])]), { target: "openapi-3.0" });
    expect(toStructuralSchema(schema as JsonSchema)).toEqual({ type: "string", enum: ["a", "b", "c"] });
  });

  it("refuses a union that Kubernetes could not express", () => {
    const schema = z.toJSONSchema(z.union([z.string(), z.number()]), { target: "openapi-3.0" });
    expect(() => toStructuralSchema(schema as JsonSchema)).toThrow(/unions of string enums/);
  });

  it("drops zod's safe-integer ceiling in favour of int64 and the date-time regular expression", () => {
    const schema = z.toJSONSchema(z.object({ n: z.int().min(0), at: z.iso.datetime() }).strict(), {
      target: "openapi-3.0",
    });
    expect(toStructuralSchema(schema as JsonSchema)).toEqual({
      type: "object",
      properties: {
        n: { type: "integer", format: "int64", minimum: 0 },
        at: { type: "string", format: "date-time" },
      },
      required: ["n", "at"],
    });
  });
});
