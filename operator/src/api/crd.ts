/**
 * Turns the zod schemas of operator/src/api/v1alpha1 into CustomResourceDefinitions: zod's OpenAPI 3.0 JSON schema,
 * rewritten into the structural subset Kubernetes accepts. Pure: the generator and the drift test both call it.
 */
import { createHash } from "node:crypto";
import { dump } from "js-yaml";
import { z } from "zod";
import { group, type KindDefinition, version } from "./v1alpha1/common.js";

export type JsonSchema = { [key: string]: unknown };

/** Annotation carrying a hash of the served schema; the operator's /readyz compares it with its own. */
export const crdRevisionAnnotation = "remram.io/crd-revision";

const safeIntegerBound = Number.MAX_SAFE_INTEGER;
const forbiddenKeywords = ["allOf", "oneOf", "not", "$ref", "nullable", "const"] as const;

function isRecord(value: unknown): value is JsonSchema {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** A union of string literals/enums becomes one enum; any other union is not structural and is refused. */
function mergeStringEnums(alternatives: unknown[], path: string): JsonSchema {
  const values: string[] = [];
  for (const alternative of alternatives) {
    if (!isRecord(alternative) || alternative.type !== "string" || !Array.isArray(alternative.enum)) {
      throw new Error(`${path}: only unions of string enums can become a structural schema`);
    }
    values.push(...(alternative.enum as string[]));
  }
  return { type: "string", enum: values };
}

/** Rewrite one JSON-schema node (recursively) into Kubernetes' structural OpenAPI v3 form. */
export function toStructuralSchema(node: JsonSchema, path = "$"): JsonSchema {
  const input = Array.isArray(node.anyOf)
    ? { ...mergeStringEnums(node.anyOf, path), ...omit(node, ["anyOf"]) }
    : node;
  const out: JsonSchema = {};
  for (const [key, value] of Object.entries(input)) {
    if ((forbiddenKeywords as readonly string[]).includes(key)) {
      throw new Error(`${path}: "${key}" has no structural equivalent`);
    }
    if (key === "$schema" || key === "id") continue;
    if (key === "properties" && isRecord(value)) {
      out.properties = Object.fromEntries(
        Object.entries(value).map(([name, child]) => [
          name,
          toStructuralSchema(child as JsonSchema, `${path}.${name}`),
        ]),
      );
    } else if (key === "items" && isRecord(value)) {
      out.items = toStructuralSchema(value, `${path}[]`);
    } else if (key === "additionalProperties") {
      // `false` is implied by pruning (and rejected beside `properties`); a schema describes a map's values.
      if (isRecord(value)) out.additionalProperties = toStructuralSchema(value, `${path}{}`);
    } else {
      out[key] = value;
    }
  }
  if (out.type === "integer") {
    if (out.maximum === safeIntegerBound) {
      delete out.maximum;
      out.format = "int64";
    }
    if (out.minimum === -safeIntegerBound) delete out.minimum;
  }
  // zod writes a long regular expression beside format: date-time; the API server checks the format itself.
  if (out.format === "date-time") delete out.pattern;
  if (out.type === undefined) throw new Error(`${path}: every node of a structural schema needs a type`);
  if (out.type === "object" && isRecord(out.default) && isRecord(out.properties)) {
    // The API server checks a default against the node's CEL rules without applying nested defaults first,
    // so an object default of {} must spell out what its properties default to.
    out.default = { ...nestedDefaults(out.properties), ...out.default };
  }
  return withLeadingKeys(out, ["type", "format", "description", "default"]);
}

/** Stable, readable key order: what a node is first, then its constraints. */
function withLeadingKeys(node: JsonSchema, leading: string[]): JsonSchema {
  const ordered: JsonSchema = {};
  for (const key of leading) if (key in node) ordered[key] = node[key];
  for (const [key, value] of Object.entries(node)) if (!(key in ordered)) ordered[key] = value;
  return ordered;
}

function nestedDefaults(properties: JsonSchema): JsonSchema {
  const defaults: JsonSchema = {};
  for (const [name, child] of Object.entries(properties)) {
    if (isRecord(child) && child.default !== undefined) defaults[name] = child.default;
  }
  return defaults;
}

function omit(node: JsonSchema, keys: string[]): JsonSchema {
  return Object.fromEntries(Object.entries(node).filter(([key]) => !keys.includes(key)));
}

/** The OpenAPI schema of one zod type as the API server should validate input (defaults applied, not required). */
export function structuralSchemaOf(schema: z.ZodType): JsonSchema {
  return toStructuralSchema(z.toJSONSchema(schema, { target: "openapi-3.0", io: "input" }) as JsonSchema);
}

export function crdName(definition: KindDefinition): string {
  return `${definition.plural}.${group}`;
}

export function openApiSchemaFor(definition: KindDefinition): JsonSchema {
  return {
    type: "object",
    description: definition.description,
    required: ["spec"],
    properties: {
      apiVersion: { type: "string" },
      kind: { type: "string" },
      metadata: { type: "object" },
      spec: structuralSchemaOf(definition.spec),
      status: structuralSchemaOf(definition.status),
    },
    ...(definition.metadataNameRule ? { "x-kubernetes-validations": [definition.metadataNameRule] } : {}),
  };
}

/** The complete CustomResourceDefinition object for one kind. */
export function buildCrd(definition: KindDefinition): JsonSchema {
  const versions = [
    {
      name: version,
      served: true,
      storage: true,
      subresources: { status: {} },
      additionalPrinterColumns: definition.printerColumns,
      schema: { openAPIV3Schema: openApiSchemaFor(definition) },
    },
  ];
  const revision = createHash("sha256").update(JSON.stringify(versions)).digest("hex").slice(0, 16);
  return {
    apiVersion: "apiextensions.k8s.io/v1",
    kind: "CustomResourceDefinition",
    metadata: {
      name: crdName(definition),
      annotations: { [crdRevisionAnnotation]: revision },
      labels: { "app.kubernetes.io/part-of": "remram" },
    },
    spec: {
      group,
      names: {
        kind: definition.kind,
        listKind: `${definition.kind}List`,
        plural: definition.plural,
        singular: definition.singular,
        shortNames: definition.shortNames,
        categories: definition.categories,
      },
      scope: "Namespaced",
      versions,
    },
  };
}

const generatedHeader =
  "# Generated by `npm run crds -w operator` from operator/src/api/v1alpha1. Do not edit.\n";

export function renderYaml(document: unknown): string {
  return `${generatedHeader}${dump(document, { noRefs: true, lineWidth: -1 })}`;
}
