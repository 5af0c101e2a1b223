import { describe, expect, it } from "vitest";
import { z } from "zod";
import { parseSpec, TerminalError } from "./terminal-error.js";

describe("a spec", () => {
  const schema = z.object({ schedule: z.string().min(1), suspend: z.boolean().default(false) }).strict();

  it("parses with its schema's defaults, a missing one as empty", () => {
    expect(parseSpec(schema, { schedule: "@daily" })).toEqual({ schedule: "@daily", suspend: false });
    expect(parseSpec(schema.omit({ schedule: true }), undefined)).toEqual({ suspend: false });
  });

  it("the schema refuses is a TerminalError naming what is wrong", () => {
    expect(() => parseSpec(schema, { schedule: "" })).toThrow(TerminalError);
    expect(() => parseSpec(schema, { schedule: "" })).toThrow(/^spec does not parse: .*schedule/s);
  });
});
