import { z } from "zod";
import { type RouteContract, routes } from "./routes.js";

type JsonSchema = Record<string, unknown>;

const statusTexts: Record<number, string> = {
  200: "OK",
  202: "Accepted",
  400: "Bad Request",
  401: "Unauthorized",
  403: "Forbidden",
  404: "Not Found",
  409: "Conflict",
  410: "Gone",
  413: "Payload Too Large",
  500: "Internal Server Error",
  503: "Service Unavailable",
};

/** A request part as it is sent (defaults optional), a response as it is answered (defaults filled in). */
function jsonSchema(schema: z.ZodType, io: "input" | "output"): JsonSchema {
  const { $schema: _, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as JsonSchema;
  return rest;
}

function parameters(schema: z.ZodType | undefined, location: "path" | "query"): JsonSchema[] {
  if (schema === undefined) return [];
  const object = jsonSchema(schema, "input") as {
    properties?: Record<string, JsonSchema>;
    required?: string[];
  };
  return Object.entries(object.properties ?? {}).map(([name, property]) => ({
    name,
    in: location,
    required: location === "path" || (object.required ?? []).includes(name),
    schema: property,
  }));
}

function operation(route: RouteContract): JsonSchema {
  const { schema } = route;
  const params = [...parameters(schema.params, "path"), ...parameters(schema.querystring, "query")];
  return {
    ...(schema.summary === undefined ? {} : { summary: schema.summary }),
    ...(route.open ? { security: [] } : {}),
    // Which callers' credentials open the operation (OpenAPI has no standard field for per-credential grants).
    ...(route.callers === undefined ? {} : { "x-remram-callers": route.callers }),
    ...(params.length === 0 ? {} : { parameters: params }),
    ...(schema.body === undefined
      ? {}
      : {
          requestBody: {
            required: true,
            content: { "application/json": { schema: jsonSchema(schema.body, "input") } },
          },
        }),
    responses: Object.fromEntries(
      Object.entries(schema.response).map(([status, response]) => [
        status,
        {
          description: statusTexts[Number(status)] ?? status,
          content: { "application/json": { schema: jsonSchema(response, "output") } },
        },
      ]),
    ),
  };
}

/** The OpenAPI 3.1 document of Cortex's API, built from the route table (contract/openapi.json holds it). */
export function openApiDocument(): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of Object.values(routes) as RouteContract[]) {
    const path = route.url.replace(/:([A-Za-z]\w*)/g, "{$1}");
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route) };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Remram Cortex",
      version: "1.0.0",
      description: "Knowledge authority: ingest, retrieve, dimensions, reflect, dream, promote, archive.",
    },
    components: { securitySchemes: { bearer: { type: "http", scheme: "bearer" } } },
    security: [{ bearer: [] }],
    paths,
  };
}

/** The text of contract/openapi.json: what `npm run openapi -w contract` writes and its unit test expects. */
export function renderOpenApi(): string {
  return `${JSON.stringify(openApiDocument(), null, 2)}\n`;
}
