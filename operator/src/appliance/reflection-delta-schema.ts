// The JSON schema of the hooks plugin's reflection delta (hooks/src/reflection.ts, ReflectionDeltaSchema), as
// Ollama's `format` for reflection runs: Ollama turns it into a grammar, so even a small model answers with a delta
// the plugin accepts. A copy, because the operator's image carries no plugin code; reflection-delta-schema.test.ts
// fails when the plugin's schema changes and prints the new one.
export const reflectionDeltaJsonSchema: Record<string, unknown> = {
  $schema: "https://json-schema.org/draft/2020-12/schema",
  type: "object",
  properties: {
    items: {
      maxItems: 20,
      type: "array",
      items: {
        type: "object",
        properties: {
          kind: {
            type: "string",
            enum: ["fact", "preference", "constraint", "decision", "correction"],
          },
          statement: {
            type: "string",
            minLength: 3,
            maxLength: 500,
          },
          confidence: {
            type: "number",
            minimum: 0,
            maximum: 1,
          },
          claim: {
            type: "object",
            properties: {
              subject: {
                type: "string",
                minLength: 1,
                maxLength: 200,
              },
              predicate: {
                type: "string",
                minLength: 1,
                maxLength: 200,
              },
              object: {
                type: "string",
                minLength: 1,
                maxLength: 500,
              },
            },
            required: ["subject", "predicate", "object"],
            additionalProperties: false,
          },
          scope: {
            type: "string",
            enum: ["user", "household"],
          },
          updates: {
            type: "string",
            minLength: 2,
            maxLength: 8,
          },
        },
        required: ["kind", "statement"],
        additionalProperties: false,
      },
    },
    adjustments: {
      default: [],
      maxItems: 20,
      type: "array",
      items: {
        type: "object",
        properties: {
          target: {
            type: "string",
            minLength: 2,
            maxLength: 8,
          },
          effect: {
            type: "string",
            enum: ["reinforce", "weaken", "contradict"],
          },
          reason: {
            type: "string",
            minLength: 1,
            maxLength: 200,
          },
        },
        required: ["target", "effect"],
        additionalProperties: false,
      },
    },
    links: {
      default: [],
      maxItems: 20,
      type: "array",
      items: {
        type: "object",
        properties: {
          from: {
            type: "string",
            minLength: 2,
            maxLength: 8,
          },
          relation: {
            type: "string",
            enum: ["supports", "contradicts", "refines", "related"],
          },
          to: {
            type: "string",
            minLength: 2,
            maxLength: 8,
          },
        },
        required: ["from", "relation", "to"],
        additionalProperties: false,
      },
    },
    candidateDimensions: {
      default: [],
      maxItems: 20,
      type: "array",
      items: {
        type: "object",
        properties: {
          name: {
            type: "string",
            minLength: 1,
            maxLength: 64,
          },
          value: {
            type: "string",
            minLength: 1,
            maxLength: 200,
          },
        },
        required: ["name", "value"],
        additionalProperties: false,
      },
    },
  },
  additionalProperties: false,
};
