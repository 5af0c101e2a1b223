/** kubectl-remram's main() run in this process, as a suite about the plugin's verbs runs it. */
import { vi } from "vitest";
import { main } from "../src/cli/main.js";

export interface CliResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** main() with `argv` (the words after `kubectl remram`), its exit code and what it wrote to stdout and stderr. */
export async function runCli(argv: readonly string[]): Promise<CliResult> {
  const captured = { stdout: "", stderr: "" };
  const capture = (stream: "stdout" | "stderr") =>
    vi.spyOn(process[stream], "write").mockImplementation((chunk: string | Uint8Array) => {
      captured[stream] += typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
      return true;
    });
  const spies = [capture("stdout"), capture("stderr")];
  try {
    const code = await main(argv);
    return { code, ...captured };
  } finally {
    for (const spy of spies) spy.mockRestore();
  }
}
