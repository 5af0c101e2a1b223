import { describe, expect, it } from "vitest";
import { splitTransferLines, transferFailure, transferTail } from "./ollama-transfer.js";

describe("reading Ollama's transfer stream", () => {
  it("parses complete lines and keeps a line cut by the chunk boundary for the next chunk", () => {
    const { lines, rest } = splitTransferLines(
      '{"status":"pulling manifest"}\n{"status":"pulling 330437513712","digest":"sha256:3304","total":100,"completed":40}\n{"status":"pull',
    );
    expect(lines).toEqual([
      { status: "pulling manifest" },
      { status: "pulling 330437513712", digest: "sha256:3304", total: 100, completed: 40 },
    ]);
    expect(rest).toBe('{"status":"pull');
  });

  it("fails clearly on a line that is not a JSON object", () => {
    expect(() => splitTransferLines("<html>\n")).toThrow(/not a JSON line.*<html>/);
    expect(() => splitTransferLines("[1]\n")).toThrow(/not a JSON object/);
  });

  it("counts only a closing success line as success", () => {
    expect(transferFailure([{ status: "writing manifest" }, { status: "success" }])).toBeUndefined();
    expect(
      transferFailure([
        { status: "pulling manifest" },
        { error: "pull model manifest: file does not exist" },
      ]),
    ).toBe("pull model manifest: file does not exist");
    // A server that dies mid-transfer just ends the stream.
    expect(transferFailure([{ status: "pulling 330437513712", total: 10, completed: 5 }])).toMatch(
      /ended without "success" \(last status: pulling 330437513712\)/,
    );
    expect(transferFailure([])).toMatch(/last status: none/);
  });

  it("tails a stream with repeated progress lines collapsed", () => {
    const tail = transferTail([
      { status: "pulling manifest" },
      { status: "pulling 330437513712", completed: 1 },
      { status: "pulling 330437513712", completed: 2 },
      { error: "unexpected EOF" },
    ]);
    expect(tail.split("\n  ")).toEqual(["pulling manifest", "pulling 330437513712", "error: unexpected EOF"]);
  });
});
